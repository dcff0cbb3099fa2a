#!/usr/bin/env bash
# abstain eval, Inspect and lm-evaluation-harness on one llama.cpp server of the bundled model, item by item.
#
#   examples/harnesses/parity.sh [SUITE] [PROTOCOL] [OUT]      defaults: quick idk runs/harness-parity
#
# Starts `python -m llama_cpp.server` on the bundled GGUF (make install-server), runs the three commands of
# docs/harnesses.md with their defaults (greedy, 512 tokens, the whole suite), imports both harness logs and
# prints how many items got the same response and the same outcome, and the compare table.
set -euo pipefail
SUITE=${1:-quick}
PROTOCOL=${2:-idk}
OUT=${3:-runs/harness-parity}
PORT=${PORT:-8765}
THREADS=${THREADS:-2}
PY=${PY:-.venv/bin/python}
BIN=$(dirname "$PY")
MODEL=smollm2-135m
URL=http://127.0.0.1:$PORT/v1
TASK=abstain_${SUITE//-/_}_$PROTOCOL
mkdir -p "$OUT"

GGUF=$($PY -c 'from abstain.backends.bundled import gguf_path; print(gguf_path())')
$PY -m llama_cpp.server --model "$GGUF" --model_alias $MODEL --host 127.0.0.1 --port "$PORT" --n_ctx 4096 \
    --n_threads "$THREADS" --verbose False > "$OUT/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
until curl -sf "$URL/models" > /dev/null; do sleep 1; done

time "$BIN/abstain" eval --model openai:$MODEL --base-url "$URL" --suite "$SUITE" --protocol "$PROTOCOL" \
    --batch-size 1 --out "$OUT/abstain"
time LLAMACPP_BASE_URL=$URL LLAMACPP_API_KEY=unused "$BIN/inspect" eval abstain/abstain_eval -T suite="$SUITE" \
    -T protocol="$PROTOCOL" --model openai-api/llamacpp/$MODEL --max-connections 1 --log-dir "$OUT/inspect-logs" \
    --display none
time OPENAI_API_KEY= "$BIN/lm_eval" --model local-chat-completions \
    --model_args model=$MODEL,base_url=$URL/chat/completions,num_concurrent=1 --tasks "$TASK" \
    --include_path "$("$BIN/abstain" lm-eval-path)" --apply_chat_template --log_samples --output_path "$OUT/lm-eval-out"

rm -rf "$OUT/inspect" "$OUT/lm-eval"
"$BIN/abstain" import inspect "$(ls -t "$OUT"/inspect-logs/*.eval | head -1)" --out "$OUT/inspect"
"$BIN/abstain" import lm-eval "$(ls -t "$OUT"/lm-eval-out/*/samples_"$TASK"_*.jsonl | head -1)" --out "$OUT/lm-eval"
$PY - "$OUT" <<'PY'
import sys
from pathlib import Path
from abstain.outcomes import outcome
from abstain.records.runs import RunDir
from abstain.schema import ScoredRow
out = Path(sys.argv[1])
ours = {r.id: r for r in RunDir(out / "abstain").read_rows("scored.jsonl", ScoredRow)}
for harness in ("inspect", "lm-eval"):
    theirs = {r.id: r for r in RunDir(out / harness).read_rows("scored.jsonl", ScoredRow)}
    same_text = sum(theirs[i].response == r.response for i, r in ours.items() if i in theirs)
    same_outcome = sum(outcome(theirs[i]) == outcome(r) for i, r in ours.items() if i in theirs)
    print(f"{harness}: {len(theirs)} of {len(ours)} items; same response {same_text}, same outcome {same_outcome}")
PY
"$BIN/abstain" compare "$OUT/abstain" "$OUT/inspect" "$OUT/lm-eval" --label abstain --label inspect \
    --label lm-eval --out "$OUT/compare"
