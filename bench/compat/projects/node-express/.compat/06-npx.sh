. .compat/common.sh
# A one-off tool fetched by npx into npm's cache.
npx --yes cowsay@1.6.0 moo
