//! isolate where agents run beyond a laptop: inside a container's user and pid namespaces as an
//! ordinary user, the way a container or a pod runs it (bubblewrap makes them here), with the
//! container's own `/proc` and with a `/proc` of another pid namespace (`bwrap --unshare-pid`
//! without `--proc`): the whole lifecycle works, and nothing waits out a grace period.

use crate::support::*;

/// A job that commits, a background job waited for, one stopped: run in `dir` by `$ISOLATE`.
const LIFECYCLE: &str = "set -e\n\
cd \"$1\" && rm -rf proj && git init -q proj && cd proj\n\
git -c user.name=u -c user.email=u@x commit -q --allow-empty -m init\n\
export GIT_CONFIG_COUNT=2 GIT_CONFIG_KEY_0=user.name GIT_CONFIG_VALUE_0=u GIT_CONFIG_KEY_1=user.email GIT_CONFIG_VALUE_1=u@x\n\
\"$ISOLATE\" run -q --grace 10m --worktree -- sh -c 'echo hi > f && git add f && git commit -qm f'\n\
echo \"branches $(git branch --list 'isolate/*' | wc -l)\"\n\
id=$(\"$ISOLATE\" run --bg --grace 10m --worktree -- sh -c 'exit 3')\n\
\"$ISOLATE\" wait \"$id\" || echo \"wait status $?\"\n\
id=$(\"$ISOLATE\" run --bg --grace 10m -- sleep 600)\n\
\"$ISOLATE\" stop \"$id\" && echo stopped\n\
\"$ISOLATE\" ps --json | grep -c '\"state\": \"running\"' || true\n";

#[test]
fn the_whole_lifecycle_runs_in_a_containers_user_and_pid_namespaces_without_delay() {
    let env = TestEnv::new();
    std::fs::write(env.path().join("lifecycle.sh"), LIFECYCLE).unwrap();
    for proc_mount in ["--proc /proc", ""] {
        let out = env.as_ordinary_user(&format!(
            "bwrap --dev-bind / / {proc_mount} --unshare-user --unshare-pid -- \
             sh \"$PWD/lifecycle.sh\" \"$PWD\""
        ));
        let text = stdout(&out);
        assert_status(&out, 0);
        for line in ["branches 1", "wait status 3", "stopped"] {
            assert!(text.contains(line), "{proc_mount}: {text}{}", stderr(&out));
        }
        // Nothing left running. Every job's grace period is ten minutes: a stop that waited one
        // out (the tree not found where `/proc` is another namespace's) would outlast the test.
        assert!(text.trim_end().ends_with('0'), "{text}");
    }
}
