. .compat/common.sh
# node's own test runner, no dependencies: a server on an ephemeral port and fetch().
d=$(mktemp -d)
cat >"$d/t.test.mjs" <<'JS'
import test from "node:test";
import assert from "node:assert";
import http from "node:http";
test("loopback fetch", async () => {
  const srv = http.createServer((_q, r) => r.end("pong")).listen(0, "127.0.0.1");
  await new Promise((ok) => srv.on("listening", ok));
  const res = await fetch(`http://127.0.0.1:${srv.address().port}/`);
  assert.equal(await res.text(), "pong");
  srv.close();
});
JS
node --test "$d/t.test.mjs"
