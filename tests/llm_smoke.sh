#!/usr/bin/env bash
# tests/llm_smoke.sh — smoke test of the real-LLM test stack:
#   scripts/llama-server (builds/caches llama.cpp's llama-server)
#   tests/ollama_standin.py (TEST STAND-IN for the Ollama API, fronting that llama-server)
#   $DICTUM_TEST_ASSETS/models/SmolLM2-135M-Instruct.Q4_1.gguf served as "smollm2:135m".
#
# Checks the Ollama behaviours the LLM-cleanup stage relies on: non-streaming and streaming
# chat/generate, a warm model answering with a tiny load_duration, a num_ctx change causing a
# real reload, /api/ps (context_length, expiry), keep_alive unloading, error shapes.
# Prints "N passed, M failed" last; exits non-zero on any failure.  All processes it starts
# are stopped on exit.
#
# Env: DICTUM_TEST_ASSETS (default ../shared from the repo root), LLAMA_SERVER_BIN (skip the
# build script and use this binary), STANDIN_LOG (where the stand-in's stderr goes).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ASSETS="${DICTUM_TEST_ASSETS:-$ROOT/../shared}"
MODEL_FILE="$ASSETS/models/SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL="smollm2:135m"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/dictum-llm-smoke.XXXXXX")"
STANDIN_LOG="${STANDIN_LOG:-$TMP/standin.log}"
SPID=""
PASS=0
FAIL=0

say() { printf '[llm-smoke] %s\n' "$*" >&2; }

cleanup() {
    local rc=$?
    if [ -n "$SPID" ] && kill -0 "$SPID" 2>/dev/null; then
        kill -TERM "$SPID" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$SPID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$SPID" 2>/dev/null || true
        wait "$SPID" 2>/dev/null || true
    fi
    rm -rf "$TMP"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ok() { PASS=$((PASS + 1)); printf 'ok   - %s\n' "$*"; }
bad() { FAIL=$((FAIL + 1)); printf 'FAIL - %s\n' "$*"; }
check() { # check "description" command [args...]
    local desc="$1"; shift
    if "$@"; then ok "$desc"; else bad "$desc"; fi
}
checke() { # checke "description" 'shell condition' (for && chains)
    if eval "$2"; then ok "$1"; else bad "$1"; fi
}

# ---- prerequisites ---------------------------------------------------------------------------
if ! command -v curl >/dev/null 2>&1; then
    say "installing curl with apt"
    if [ "$(id -u)" -eq 0 ]; then SUDO=(); else SUDO=(sudo); fi
    DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get update -qq >&2 || true
    DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq curl >&2
fi
[ -f "$MODEL_FILE" ] || { say "missing model $MODEL_FILE (set DICTUM_TEST_ASSETS)"; echo "0 passed, 1 failed"; exit 1; }

if [ -n "${LLAMA_SERVER_BIN:-}" ]; then
    LLAMA_BIN="$LLAMA_SERVER_BIN"
else
    say "getting llama-server (first run builds it: ~8-11 min on 2 cores)"
    LLAMA_BIN="$("$ROOT/scripts/llama-server")"
fi
say "llama-server: $LLAMA_BIN"

# ---- start the stand-in on a free port ---------------------------------------------------------
python3 "$ROOT/tests/ollama_standin.py" --port 0 --llama-server "$LLAMA_BIN" \
    --model-file "$MODEL_FILE" --model-name "$MODEL" --verbose \
    >"$TMP/standin.out" 2>"$STANDIN_LOG" &
SPID=$!
BASE=""
for _ in $(seq 1 100); do
    if grep -q '^READY ' "$TMP/standin.out" 2>/dev/null; then
        BASE="$(sed -n 's/^READY //p' "$TMP/standin.out" | head -n 1)"
        break
    fi
    kill -0 "$SPID" 2>/dev/null || break
    sleep 0.1
done
if [ -z "$BASE" ]; then
    say "stand-in did not start:"; cat "$STANDIN_LOG" >&2 || true
    echo "0 passed, 1 failed"; exit 1
fi
say "stand-in at $BASE (pid $SPID)"

# ---- helpers -------------------------------------------------------------------------------------
# req METHOD PATH [JSON] -> body in $TMP/body, status in $STATUS, seconds in $SECS
req() {
    local method="$1" path="$2" data="${3:-}" out
    local args=(-sS -o "$TMP/body" -w '%{http_code} %{time_total}' -X "$method" --max-time 120)
    [ -n "$data" ] && args+=(-H 'Content-Type: application/json' --data-binary "$data")
    out="$(curl "${args[@]}" "$BASE$path")" || { STATUS=000; SECS=0; return 0; }
    STATUS="${out%% *}"
    SECS="${out##* }"
}
# j EXPR: evaluate a Python expression over the last JSON body (bound to `b`)
j() { python3 -c 'import json,sys; b=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$TMP/body" "$1"; }
jt() { [ "$(j "$1" 2>/dev/null)" = "True" ]; }
ms() { python3 -c "print(round($1/1e6, 3))"; }

chat_body() { # chat_body NUM_CTX KEEP_ALIVE_JSON [TEXT]
    local text="${3:-Fix the punctuation: hello how are you}"
    printf '{"model":"%s","messages":[{"role":"system","content":"You fix punctuation. Reply with the corrected text only."},{"role":"user","content":"%s"}],"stream":false,"keep_alive":%s,"options":{"num_ctx":%s,"temperature":0,"num_predict":48}}' \
        "$MODEL" "$text" "$2" "$1"
}

# ---- simple endpoints ------------------------------------------------------------------------------
req GET /
checke "GET / answers 'Ollama is running'" '[ "$STATUS" = 200 ] && grep -qx "Ollama is running" "$TMP/body"'
req GET /api/version
check "GET /api/version has a version" jt "isinstance(b.get('version'), str) and b['version'] != ''"
req GET /api/tags
check "GET /api/tags lists $MODEL" jt "[m['name'] for m in b['models']] == ['$MODEL'] and b['models'][0]['size'] > 0 and len(b['models'][0]['digest']) == 64"
req POST /api/show "{\"model\":\"$MODEL\"}"
check "POST /api/show has details and model_info" jt "b['details']['format'] == 'gguf' and b['model_info']['llama.context_length'] == 8192"
req GET /api/ps
check "GET /api/ps lists nothing before the first request" jt "b == {'models': []}"

# ---- warm-up: first load -------------------------------------------------------------------------
req POST /api/chat "$(chat_body 2048 '"5m"')"
check "warm-up chat answers 200 with done=true" jt "b['done'] is True and b['message']['role'] == 'assistant' and isinstance(b['message']['content'], str)"
check "warm-up chat has all Ollama stats fields" jt "all(isinstance(b[k], int) for k in ('total_duration','load_duration','prompt_eval_count','prompt_eval_duration','eval_count','eval_duration')) and b['done_reason'] in ('stop','length') and b['model'] == '$MODEL' and b['created_at'].endswith('Z')"
check "warm-up counts are real (prompt_eval_count > 10, eval_count > 0)" jt "b['prompt_eval_count'] > 10 and b['eval_count'] > 0 and b['eval_duration'] > 0"
FIRST_LOAD="$(j "b['load_duration']" 2>/dev/null || echo 0)"
check "first load is a real load (load_duration $(ms "$FIRST_LOAD") ms > 100 ms)" [ "$FIRST_LOAD" -gt 100000000 ]
say "warm-up reply: $(j "b['message']['content']" 2>/dev/null | head -c 200)"

# ---- warm requests ---------------------------------------------------------------------------------
WARM_MAX=0
WARM_TIMES=()
for i in 1 2 3 4 5; do
    req POST /api/chat "$(chat_body 2048 '"5m"' "request number $i please punctuate this")"
    ld="$(j "b['load_duration'] if b.get('done') else -1" 2>/dev/null || echo -1)"
    WARM_TIMES+=("$SECS")
    checke "warm chat $i: 200, load_duration $(ms "$ld") ms < 50 ms, total ${SECS}s" \
        '[ "$STATUS" = 200 ] && [ "$ld" -ge 0 ] && [ "$ld" -lt 50000000 ]'
    if [ "$ld" -gt "$WARM_MAX" ]; then WARM_MAX="$ld"; fi
done
say "warm request wall times (s): ${WARM_TIMES[*]}; max load_duration $(ms "$WARM_MAX") ms"

req GET /api/ps
check "/api/ps shows $MODEL with context_length 2048, size_vram 0" jt "len(b['models']) == 1 and b['models'][0]['name'] == '$MODEL' and b['models'][0]['context_length'] == 2048 and b['models'][0]['size_vram'] == 0 and b['models'][0]['size'] > 0 and 'expires_at' in b['models'][0] and b['models'][0]['details']['quantization_level'] == 'Q4_1'"

# ---- num_ctx change: real reload ---------------------------------------------------------------------
req POST /api/chat "$(chat_body 4096 '"5m"')"
RELOAD="$(j "b['load_duration']" 2>/dev/null || echo 0)"
checke "num_ctx 2048 -> 4096 reloads (load_duration $(ms "$RELOAD") ms > 100 ms)" '[ "$STATUS" = 200 ] && [ "$RELOAD" -gt 100000000 ]'
req GET /api/ps
check "/api/ps context_length is now 4096" jt "b['models'][0]['context_length'] == 4096"
req POST /api/chat "$(chat_body 4096 '"5m"')"
check "same num_ctx again is warm (load_duration < 50 ms)" jt "b['load_duration'] < 50_000_000"

# ---- default num_ctx (Ollama's documented 4096) needs no reload now -----------------------------------
req POST /api/generate "{\"model\":\"$MODEL\",\"prompt\":\"Say hi\",\"system\":\"Be brief.\",\"stream\":false,\"options\":{\"temperature\":0,\"num_predict\":16}}"
check "generate (stream false, default num_ctx) answers with response + stats, no reload" jt "b['done'] is True and isinstance(b['response'], str) and b['eval_count'] > 0 and b['load_duration'] < 50_000_000"

# ---- streaming (the default when "stream" is absent) ----------------------------------------------------
curl -sS --max-time 120 -H 'Content-Type: application/json' \
    -d "{\"model\":\"$MODEL\",\"messages\":[{\"role\":\"user\",\"content\":\"Count to five.\"}],\"options\":{\"num_ctx\":4096,\"temperature\":0,\"num_predict\":24}}" \
    "$BASE/api/chat" >"$TMP/stream" || true
check "streaming chat: NDJSON chunks, last one done=true with stats" python3 - "$TMP/stream" <<'EOF'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert len(lines) >= 2, lines
assert all(not l["done"] for l in lines[:-1])
assert all(l["message"]["role"] == "assistant" for l in lines[:-1])
last = lines[-1]
assert last["done"] is True and last["eval_count"] > 0 and last["prompt_eval_count"] > 0, last
assert "".join(l["message"]["content"] for l in lines[:-1]).strip(), "empty stream"
EOF

# ---- errors --------------------------------------------------------------------------------------------------
req POST /api/chat '{"model":"nope","messages":[{"role":"user","content":"hi"}],"stream":false}'
check "unknown model -> 404 {\"error\": \"model 'nope' not found\"}" jt "$STATUS == 404 and b == {'error': \"model 'nope' not found\"}"
req POST /api/chat '{"model": "smollm2:135m", "messages": [' 
check "malformed JSON -> 400 with error" jt "$STATUS == 400 and isinstance(b.get('error'), str)"

# ---- X-Standin-Hang knob ----------------------------------------------------------------------------------------
set +e
curl -sS -o /dev/null --max-time 1 -H 'X-Standin-Hang: 3' "$BASE/api/version" 2>/dev/null
HANG_RC=$?
set -e
check "X-Standin-Hang: 3 makes a 1 s client time out (curl rc $HANG_RC = 28)" [ "$HANG_RC" = 28 ]

# ---- keep_alive ----------------------------------------------------------------------------------------------------
req POST /api/chat "$(chat_body 4096 '"1s"')"
T0=$(date +%s%N)
check "chat with keep_alive \"1s\" answers" [ "$STATUS" = 200 ]
req GET /api/ps
check "right after it, /api/ps still lists the model" jt "len(b['models']) == 1"
UNLOADED=""
for _ in $(seq 1 250); do  # poll for up to ~5 s
    if curl -sS --max-time 2 "$BASE/api/ps" | grep -q '"models": \[\]'; then
        UNLOADED="$(( ($(date +%s%N) - T0) / 1000000 ))"; break
    fi
    sleep 0.02
done
[ -n "$UNLOADED" ] && UNLOADED="$(python3 -c "print($UNLOADED / 1000)")"
check "keep_alive \"1s\" unloads within 5 s (took ${UNLOADED:-never} s)" [ -n "$UNLOADED" ]

req POST /api/chat "$(chat_body 2048 0)"
check "chat with keep_alive 0 answers" [ "$STATUS" = 200 ]
req GET /api/ps
check "keep_alive 0 unloads right after the request" jt "b['models'] == []"

req POST /api/generate "{\"model\":\"$MODEL\",\"keep_alive\":-1}"
check "empty generate loads the model (done_reason load)" jt "b['done'] is True and b['done_reason'] == 'load'"
req GET /api/ps
check "keep_alive -1: expires_at far in the future" jt "len(b['models']) == 1 and int(b['models'][0]['expires_at'][:4]) > 2200"
req POST /api/generate "{\"model\":\"$MODEL\",\"keep_alive\":0}"
check "empty generate with keep_alive 0 unloads (done_reason unload)" jt "b['done_reason'] == 'unload'"
req GET /api/ps
check "/api/ps empty after the unload request" jt "b['models'] == []"

# ---- process hygiene --------------------------------------------------------------------------------------------
req POST /api/chat "$(chat_body 2048 '"5m"')"
CHILDREN="$(cat /proc/"$SPID"/task/*/children 2>/dev/null | tr -s ' \n' ' ')"
kill -TERM "$SPID"
for _ in $(seq 1 50); do kill -0 "$SPID" 2>/dev/null || break; sleep 0.1; done
wait "$SPID" 2>/dev/null || true
STILL=""
for c in $CHILDREN; do kill -0 "$c" 2>/dev/null && STILL="$STILL $c"; done
checke "SIGTERM stops the stand-in and its llama-server (children: ${CHILDREN:-none})" \
    '[ -n "$CHILDREN" ] && [ -z "$STILL" ] && ! kill -0 "$SPID" 2>/dev/null'
SPID=""

echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
