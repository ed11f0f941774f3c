#!/usr/bin/env bash
# The launcher of the first seed article (a bubblewrap wrapper that runs an
# OpenCode "expert agent" daemon), with vault-run options: src/ and config/
# read-only, workers/, workspace/ and logs/ writable, .env read outside and
# passed as variables, never visible inside. As host root the writable
# directories are root's and the agent is uid 65534: their views present
# them as the agent's, so the daemon writes its results (with a plain bind
# it got "Permission denied"). Every write is in the run's one log.
. "$(dirname "$0")/../lib/libtest.sh"
. "$(dirname "$0")/../lib/sandbox-lib.sh"
vr_require_sandbox
command -v node >/dev/null || vr_skip "node is not installed"

L="$T/legion"
mkdir -p "$L"/{src/cli,config,workers,workspace,logs}
cat >"$L/.env" <<'EOF'
ANTHROPIC_API_KEY=sk-ant-hunter2-seed
LEGION_MODE=expert
NODE_ENV=production
EOF
echo '{"persona":"reviewer"}' >"$L/config/legion.json"
cat >"$L/src/cli/index.js" <<'EOF'
const fs = require('fs');
const out = [];
const tryDo = (what, f) => { try { f(); out.push(`${what}=ok`); } catch (e) { out.push(`${what}=${e.code}`); } };
const cfg = JSON.parse(fs.readFileSync('/config/legion.json'));
tryDo('worker', () => fs.writeFileSync(`/workers/${cfg.persona}.json`, JSON.stringify({pid: process.pid})));
tryDo('workspace', () => { fs.mkdirSync('/workspace/task-1'); fs.writeFileSync('/workspace/task-1/result.md', '# done\n'); });
tryDo('log', () => fs.appendFileSync('/logs/legion.log', `mode=${process.env.LEGION_MODE}\n`));
tryDo('src', () => fs.writeFileSync('/src/cli/index.js', 'evil'));
tryDo('config', () => fs.writeFileSync('/config/legion.json', '{}'));
tryDo('dotenv', () => fs.readFileSync(process.env.LEGION_DIR + '/.env'));
out.push(`key=${process.env.ANTHROPIC_API_KEY ? 'set' : 'unset'}`);
console.log(out.join('\n'));
EOF
chmod -R go-w "$L" # as the seed's checkout is: the owner's
cd "$L"

# bwrap's options as the seed passes them; the project (the view the agent
# works in) is workspace/, and .env is read here, outside, into variables.
st=0
out=$("$VR" --project "$L/workspace" --mount-at /workspace --profile none --net none --audit "$T/audit.jsonl" \
	--env-file "$L/.env" --setenv LEGION_DIR "$L" \
	--ro-bind "$L/src" /src --ro-bind "$L/config" /config \
	--bind "$L/workers" /workers --bind "$L/logs" /logs \
	--chdir / -- /usr/bin/node /src/cli/index.js 2>"$T/err") || st=$?
echo "$out"
cat "$T/err"
vr_check "the launcher runs (exit $st)" test "$st" = 0
vr_check "it writes workers/" grep -qx worker=ok <<<"$out"
vr_check "… workspace/" grep -qx workspace=ok <<<"$out"
vr_check "… and logs/" grep -qx log=ok <<<"$out"
vr_check "… which reach the host" bash -c "test -s '$L/workers/reviewer.json' && test -s '$L/workspace/task-1/result.md' && grep -qx mode=expert '$L/logs/legion.log'"
vr_check "src/ is read-only" grep -qx 'src=EROFS' <<<"$out"
vr_check "config/ is read-only" grep -qx 'config=EROFS' <<<"$out"
vr_check ".env is not in the sandbox" grep -qx 'dotenv=ENOENT' <<<"$out"
vr_check "its variables are (read outside)" grep -qx key=set <<<"$out"
vr_check "the host's src/ is untouched" grep -q readFileSync "$L/src/cli/index.js"
vr_check "the writes to workers/ and logs/ are in the run's log with their root" bash -c \
	"grep -q '\"root\":\"$L/workers\",\"op\":\"create\",\"path\":\"reviewer.json\"' '$T/audit.jsonl' &&
	 grep -q '\"root\":\"$L/logs\",\"op\":\"create\",\"path\":\"legion.log\"' '$T/audit.jsonl'"
vr_check "the summary counts every write to the host" grep -q '3 written.*(2 of them outside the project)' "$T/err"
vr_done
