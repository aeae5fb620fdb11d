#!/usr/bin/env bash
# `ltx2 generate` end to end on the embedded tiny model: MP4 (ffprobe: h264 + aac, frame count,
# seed tag), WAV and PNGs are written; bad flags exit 2 and leave no file behind.
# Usage: cli_generate.sh LTX2_BINARY SOURCE_DIR
set -u
bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
src="$2"
tmp="$(mktemp -d /tmp/ltx2_cli_generate.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
fail=0
pass=0
ok() { pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }
small=(--height 64 --width 96 --frames 17 --steps 2 --threads 2)
# Everything below writes MP4 and PNG: a build without FFmpeg or libpng (e.g. on a GPU machine
# without those -dev packages) skips, saying why, rather than failing.
features=$("$bin" --version | sed -n 's/^features://p')
for f in mp4 png; do
    if ! grep -qw "$f" <<<"$features"; then echo "skipped: this build has no $f output (features:$features)"; exit 77; fi
done

# OpenMP waits passively unless the user chose (#16 item 7): ltx2 sets it for itself
(unset OMP_WAIT_POLICY; "$bin" version) | grep -q "^openmp wait policy: passive$" && ok || bad "default wait policy is not passive"
OMP_WAIT_POLICY=active "$bin" version | grep -q "^openmp wait policy: active$" && ok || bad "the user's wait policy was overridden"

# ---- refusals: exit 2, a reason, nothing written ----
expect_refusal() {
    local what="$1" pattern="$2"
    shift 2
    local out="$tmp/refuse"
    rm -rf "$out" && mkdir -p "$out"
    (cd "$out" && "$bin" generate "$@" >"$tmp/stdout" 2>"$tmp/stderr")
    local rc=$?
    if [ "$rc" -ne 2 ]; then bad "$what: exit $rc, expected 2"; cat "$tmp/stderr"; return; fi
    if ! grep -qi -- "$pattern" "$tmp/stderr"; then bad "$what: stderr lacks '$pattern'"; cat "$tmp/stderr"; return; fi
    if [ -n "$(ls -A "$out")" ]; then bad "$what: left files: $(ls -A "$out")"; return; fi
    ok
}
expect_refusal "frames 10" "8k+1" "${small[@]}" --frames 10 -o o.mp4 --wav a.wav --png-dir f
expect_refusal "width 100" "multiples of 32" "${small[@]}" --width 100 -o o.mp4
expect_refusal "steps 0" "integer in \[1, 1000\]" --steps 0 -o o.mp4
# numbers that would wrap or never finish are refused, not truncated (#16)
expect_refusal "frames 2^32+25" "integer in \[1, 8193\]" --frames 4294967321 -o o.mp4
expect_refusal "height 2^32+256" "integer in \[1, 8192\]" --height 4294967552 -o o.mp4
expect_refusal "steps 1e9" "integer in \[1, 1000\]" --steps 1000000000 -o o.mp4
expect_refusal "threads 100000" "--threads expects an integer in \[0, " --threads 100000 -o o.mp4
expect_refusal "steps 1" ">= 2" --steps 1 -o o.mp4
expect_refusal "bad number" "expects a number" --guidance-scale abc -o o.mp4
expect_refusal "unknown flag" "unknown option" --bogus -o o.mp4
expect_refusal "missing checkpoint" "no such readable file" --checkpoint "$tmp/nope.safetensors" --prompt-embeds x -o o.mp4
expect_refusal "missing embeds" "no such readable file" --prompt-embeds "$tmp/nope.safetensors" -o o.mp4
expect_refusal "unwritable dir" "not writable" "${small[@]}" --wav "$tmp/no/such/dir/a.wav" --png-dir f
expect_refusal "wrong suffix" "end in .mp4" "${small[@]}" -o o.avi --png-dir f
expect_refusal "semantics" "ltx-core, diffusers or maxdiffusion" --semantics foo -o o.mp4
# --precision tpu (#15 item 3): MaxDiffusion's bf16 DiT, checked against MaxDiffusion in test_md_golden;
# here: the flag parses, needs MaxDiffusion's semantics, and changes the run
expect_refusal "precision" "fp32 or tpu" --precision bf16 -o o.mp4
expect_refusal "precision tpu without maxdiffusion" "semantics maxdiffusion" "${small[@]}" --precision tpu --wav a.wav
if (cd "$tmp" && "$bin" generate "${small[@]}" --semantics maxdiffusion --device cpu --wav md32.wav >/dev/null 2>&1 &&
    "$bin" generate "${small[@]}" --semantics maxdiffusion --device cpu --precision tpu --wav mdtpu.wav \
        >"$tmp/stdout" 2>"$tmp/stderr"); then
    grep -q "precision tpu" "$tmp/stdout" && ok || bad "the tpu run does not say its precision"
    cmp -s "$tmp/md32.wav" "$tmp/mdtpu.wav" && bad "--precision tpu changed nothing" || ok
else
    bad "generate --precision tpu failed"; cat "$tmp/stderr"
fi
# fp8 weights: an unknown dtype or quantisation is refused at parsing; the embedded model holds no
# scaled fp8 weights, so fp8 of it is refused by the loader, naming why, before any file is written
expect_refusal "weights dtype" "bf16, fp8 or fp8-cast" --weights-dtype fp4 -o o.mp4
expect_refusal "quantization" "fp8-scaled-mm or fp8-cast" --quantization int8 -o o.mp4
expect_refusal "fp8 of a bf16 model" "pre-quantised" "${small[@]}" --weights-dtype fp8 --wav a.wav --png-dir f
# fp8 attention: an unknown dtype and --precision tpu refused; on the embedded model (video head dim
# 16, the e4m3 attention takes 128) the run says its attentions stay as they were, and they do
expect_refusal "attention dtype" "must be bf16 or fp8" --attention-dtype fp16 -o o.mp4
expect_refusal "fp8 attention, precision tpu" "no e4m3 attention" "${small[@]}" --semantics maxdiffusion \
    --precision tpu --attention-dtype fp8 --wav a.wav
if (cd "$tmp" && "$bin" generate "${small[@]}" --attention-dtype fp8 --wav f8att.wav >"$tmp/stdout" 2>"$tmp/stderr"); then
    grep -q "fp8 attention: this model's video attentions are not of the head dim it takes" "$tmp/stderr" && ok \
        || bad "the fp8 attention run does not say it does not apply: $(grep -i attention "$tmp/stderr")"
    "$bin" generate "${small[@]}" --wav "$tmp/f8base.wav" >/dev/null 2>&1 && cmp -s "$tmp/f8att.wav" "$tmp/f8base.wav" \
        && ok || bad "fp8 attention changed a model it does not apply to"
else
    bad "generate --attention-dtype fp8 failed"; cat "$tmp/stderr"
fi
# fp8-cast (ltx-core's fp8_cast policy, exact against it in test_dit_fp8_cast): it runs on the embedded
# model and changes its output; with a LoRA it is refused before any work (GPU-only stochastic rounding)
fc="$tmp/fp8_cast"
mkdir -p "$fc"
if (cd "$fc" && "$bin" generate "${small[@]}" --wav plain.wav >/dev/null 2>&1 &&
    "$bin" generate "${small[@]}" --quantization fp8-cast --wav cast.wav >/dev/null 2>"$tmp/stderr"); then
    ! cmp -s "$fc/plain.wav" "$fc/cast.wav" && ok || bad "--quantization fp8-cast changed nothing"
    grep -q "fp8-cast DiT weights" "$tmp/stderr" && ok || bad "the fp8-cast run does not say so"
    # across 2 context ranks each rank rounds its shards: the same WAV as one rank (both on the CPU)
    if (cd "$fc" && "$bin" generate "${small[@]}" --quantization fp8-cast --device cpu --wav cast1.wav >/dev/null 2>&1 &&
        "$bin" generate "${small[@]}" --quantization fp8-cast --device cpu --nproc 2 --wav cast2.wav \
        >/dev/null 2>"$tmp/stderr"); then
        cmp -s "$fc/cast1.wav" "$fc/cast2.wav" && ok || bad "--quantization fp8-cast --nproc 2 differs from one rank"
    else
        bad "generate --quantization fp8-cast --nproc 2 failed"; cat "$tmp/stderr"
    fi
else
    bad "generate --quantization fp8-cast failed"; cat "$tmp/stderr"
fi
expect_refusal "fp8-cast with a LoRA" "stochastic rounding" "${small[@]}" --quantization fp8-cast \
    --lora "$src/weights/tiny/ltx2-tiny-lora-style-2.0.safetensors" 0.8 --wav a.wav
# --device: an unknown name, and a CUDA device no machine has (no GPU: no usable device; with GPUs:
# the index is out of range), refused before any work, for one rank and for several (each rank
# opens its own device; rank 0's is checked before any rank starts)
expect_refusal "device name" "expected cpu, cuda, cuda:N or auto" --device tpu -o o.mp4
expect_refusal "device cuda:99" "device cuda:99" --device cuda:99 -o o.mp4
expect_refusal "device cuda:99, 2 ranks" "device cuda:99" --device cuda:99 --nproc 2 -o o.mp4
expect_refusal "CFG without negative" "negative-prompt-embeds" \
    --prompt-embeds "$src/weights/tiny/prompt_embeds_positive.safetensors" --checkpoint "$src/weights/tiny/ltx2-tiny-2.0.safetensors" -o o.mp4
# a checkpoint that is not one: refused after parsing, and still no file
echo "not a safetensors file" >"$tmp/bad.safetensors"
expect_refusal "bad checkpoint" "error" "${small[@]}" --checkpoint "$tmp/bad.safetensors" \
    --prompt-embeds "$src/weights/tiny/prompt_embeds_positive.safetensors" --guidance-scale 1 --audio-guidance-scale 1 \
    --wav a.wav --png-dir f

# two outputs naming one place (#16): refused before the run, not after it
expect_refusal "same path twice" "both name" "${small[@]}" --wav x.wav --dump x.wav
expect_refusal "png-dir = dump" "both name" "${small[@]}" --png-dir f --dump f/
# text prompts (#13): bad combinations and bad text are refused before any work
expect_refusal "prompt and embeds" "exclusive" --prompt "a cat" --prompt-embeds "$src/weights/tiny/prompt_embeds_positive.safetensors" -o o.mp4
expect_refusal "negative without prompt" "needs --prompt" --negative-prompt "dark" -o o.mp4
expect_refusal "empty prompt" "empty" --prompt "  " -o o.mp4
expect_refusal "prompt not UTF-8" "not valid UTF-8 (byte 3" --prompt $'caf\xc3(' -o o.mp4
expect_refusal "text encoder missing" "not a directory" --prompt "a cat" --text-encoder "$tmp/nope" -o o.mp4
expect_refusal "text encoder without tokenizer" "no readable tokenizer.model" --prompt "a cat" --text-encoder "$src/weights/tiny/gemma-6l" -o o.mp4
expect_refusal "checkpoint, no prompt" "--prompt (with --text-encoder), --prompt-embeds or --context" --checkpoint "$src/weights/tiny/ltx2-tiny-2.0.safetensors" -o o.mp4
expect_refusal "prompt, checkpoint, no encoder" "needs --text-encoder DIR" --prompt "a cat" --checkpoint "$src/weights/tiny/ltx2-tiny-2.0.safetensors" -o o.mp4
expect_refusal "save embeds suffix" "end in .safetensors" --prompt "a cat" --save-prompt-embeds pe.npz -o o.mp4
# a Gemma whose width x hidden states is not what the checkpoint's projection takes: refused from the
# headers, before Gemma or the DiT runs
mkdir -p "$tmp/g6" && cp "$src"/weights/tiny/gemma-6l/* "$src/weights/tiny/gemma/tokenizer.model" "$tmp/g6/"
expect_refusal "encoder of another width" "not the Gemma-3 this model was trained with" --prompt "a cat" --text-encoder "$tmp/g6" -o o.mp4

# ---- text in: the embedded tiny Gemma; its saved hidden states give the same run back ----
txt="$tmp/text"
mkdir -p "$txt"
nocfg=(--guidance-scale 1 --audio-guidance-scale 1)
if (cd "$txt" && "$bin" generate "${small[@]}" "${nocfg[@]}" --prompt "A cat walks across a neon street at night" \
        --text-cache cache --save-prompt-embeds pe.safetensors --wav a.wav >"$tmp/stdout" 2>"$tmp/stderr"); then ok; else bad "generate --prompt failed"; cat "$tmp/stderr"; fi
grep -q 'prompt: "A cat walks' "$tmp/stdout" && ok || bad "the prompt is not echoed: $(grep prompt "$tmp/stdout")"
! grep -q '(null)' "$tmp/stdout" && ok || bad "the run's summary prints a null string: $(grep -n '(null)' "$tmp/stdout")"
grep -q "text encoder: Gemma-3" "$tmp/stderr" && ok || bad "no text encoder line on stderr"
if (cd "$txt" && "$bin" generate "${small[@]}" "${nocfg[@]}" --prompt-embeds pe.safetensors --wav b.wav >/dev/null 2>"$tmp/stderr"); then ok; else bad "generate from saved embeds failed"; cat "$tmp/stderr"; fi
cmp -s "$txt/a.wav" "$txt/b.wav" && ok || bad "the saved prompt embeddings do not reproduce the text run"
if (cd "$txt" && "$bin" generate "${small[@]}" --no-text-cache --prompt "A cat" --wav c.wav >/dev/null 2>"$tmp/stderr"); then ok; else bad "generate --prompt with CFG failed"; cat "$tmp/stderr"; fi
grep -q "default negative prompt" "$tmp/stderr" && ok || bad "CFG without --negative-prompt does not say it used the default"
# a prompt past 1024 tokens runs, truncated as the reference truncates, and says so
long=$(printf 'x%.0s' $(seq 1 2000))
if (cd "$txt" && "$bin" generate "${small[@]}" "${nocfg[@]}" --no-text-cache --prompt "$long" --wav e.wav >/dev/null 2>"$tmp/stderr"); then ok; else bad "a long prompt failed"; cat "$tmp/stderr"; fi
grep -q "2001 tokens, truncated to 1024" "$tmp/stderr" && ok || bad "no truncation warning: $(grep -i prompt "$tmp/stderr")"
# the text cache: the same prompt again skips Gemma and gives the same run; --no-text-cache wrote nothing
[ "$(ls "$txt/cache" 2>/dev/null | wc -l)" -eq 1 ] && ok || bad "expected one cached prompt, found: $(ls "$txt/cache" 2>/dev/null)"
if (cd "$txt" && "$bin" generate "${small[@]}" "${nocfg[@]}" --prompt "A cat walks across a neon street at night" \
        --text-cache cache --wav d.wav >/dev/null 2>"$tmp/stderr"); then ok; else bad "generate from the cache failed"; cat "$tmp/stderr"; fi
grep -q "from the cache" "$tmp/stderr" && ! grep -q "text encoder: Gemma-3" "$tmp/stderr" && ok || bad "the repeated prompt ran Gemma again"
cmp -s "$txt/a.wav" "$txt/d.wav" && ok || bad "the cached prompt does not reproduce the run"
# --text-cache-size: a new prompt under a bound below one prompt's file replaces the old one
if (cd "$txt" && "$bin" generate "${small[@]}" "${nocfg[@]}" --prompt "A dog" --text-cache cache \
        --text-cache-size 0.000001 --wav f.wav >/dev/null 2>"$tmp/stderr"); then ok; else bad "a bounded text cache failed"; cat "$tmp/stderr"; fi
grep -q "1 least recently used prompt (.*) removed from the cache" "$tmp/stderr" && [ "$(ls "$txt/cache" | wc -l)" -eq 1 ] \
  && ok || bad "the bound did not remove the older prompt: $(ls "$txt/cache"), $(grep cache "$tmp/stderr")"
expect_refusal "a negative cache bound" "--text-cache-size -1: GiB in" --prompt "a cat" --text-cache-size -1 -o o.mp4
# --enhance-prompt (#13 item 9): bad combinations refused before any work; then a run. The tiny
# random Gemma answers with newlines only, so the run says so and encodes the prompt as given: the
# same clip as the plain text run (test_gemma_enhance checks the enhancement itself against transformers)
sys_prompt="$src/tests/data/enhance_system_prompt.txt"
expect_refusal "enhance option alone" "changes --enhance-prompt" --prompt "a cat" --enhance-seed 3 -o o.mp4
expect_refusal "enhance embeddings" "rewrites a text --prompt" --enhance-prompt --prompt-embeds "$src/weights/tiny/prompt_embeds_positive.safetensors" -o o.mp4
expect_refusal "enhance, no system prompt" "enhance-system-prompt FILE" --prompt "a cat" --enhance-prompt -o o.mp4
expect_refusal "enhance, system prompt missing" "enhance-system-prompt" --prompt "a cat" --enhance-prompt --enhance-system-prompt "$tmp/nope.txt" -o o.mp4
expect_refusal "enhance, no token budget" "enhance-max-tokens" --prompt "a cat" --enhance-prompt --enhance-system-prompt "$sys_prompt" --enhance-max-tokens 0 -o o.mp4
if (cd "$txt" && "$bin" generate "${small[@]}" "${nocfg[@]}" --no-text-cache --prompt "A cat walks across a neon street at night" \
        --enhance-prompt --enhance-system-prompt "$sys_prompt" --enhance-max-tokens 8 --wav f.wav >"$tmp/stdout" 2>"$tmp/stderr"); then ok; else bad "generate --enhance-prompt failed"; cat "$tmp/stderr"; fi
grep -q "enhance prompt: sampled, seed 42, at most 8 tokens" "$tmp/stdout" && ok || bad "the enhancement settings are not echoed"
grep -q "enhance: Gemma-3 on cpu, a [0-9]*-token chat prompt" "$tmp/stderr" && ok || bad "no enhancement line on stderr"
grep -q "answer is empty or only whitespace" "$tmp/stderr" && ok || bad "the empty answer is not reported"
cmp -s "$txt/a.wav" "$txt/f.wav" && ok || bad "an empty enhancement did not encode the prompt as given"
# across ranks rank 0 enhances and the others encode its answer (ltx2_comm_broadcast_text): the same clip
if (cd "$txt" && "$bin" generate "${small[@]}" "${nocfg[@]}" --no-text-cache --prompt "A cat walks across a neon street at night" \
        --enhance-prompt --enhance-system-prompt "$sys_prompt" --enhance-max-tokens 8 --device cpu --nproc 2 --wav g.wav \
        >/dev/null 2>"$tmp/stderr"); then ok; else bad "generate --enhance-prompt --nproc 2 failed"; cat "$tmp/stderr"; fi
cmp -s "$txt/f.wav" "$txt/g.wav" && ok || bad "--enhance-prompt over 2 ranks differs from one rank"
# fp8-stored Gemma weights (--text-encoder-dtype fp8, test_gemma_fp8): another run, cached apart from the
# bf16 one, and read back from there
if (cd "$txt" && "$bin" generate "${small[@]}" "${nocfg[@]}" --prompt "A cat walks across a neon street at night" \
        --text-cache cache --text-encoder-dtype fp8 --wav f8.wav >/dev/null 2>"$tmp/stderr" &&
    "$bin" generate "${small[@]}" "${nocfg[@]}" --prompt "A cat walks across a neon street at night" \
        --text-cache cache --text-encoder-dtype fp8 --wav f8b.wav >/dev/null 2>"$tmp/stderr2"); then
    grep -q "fp8-stored Linear weights" "$tmp/stderr" && ok || bad "the fp8 text encoder run did not run Gemma in fp8"
    ! cmp -s "$txt/a.wav" "$txt/f8.wav" && ok || bad "--text-encoder-dtype fp8 changed nothing"
    grep -q "from the cache" "$tmp/stderr2" && cmp -s "$txt/f8.wav" "$txt/f8b.wav" && ok || bad "the fp8 prompt was not cached"
    [ "$(ls "$txt/cache" | wc -l)" -eq 2 ] && ok || bad "fp8 and bf16 hidden states must be cached apart: $(ls "$txt/cache")"
else
    bad "generate --text-encoder-dtype fp8 failed"; cat "$tmp/stderr" "$tmp/stderr2"
fi
expect_refusal "text encoder dtype" "bf16 or fp8" --prompt "x" --text-encoder-dtype fp4 -o o.mp4

# SIGTERM / SIGINT (#16 item 3): the run stops at its next step, exits 128 + the signal, and leaves
# no file (no half MP4, no temporaries, no frames)
for sig in TERM INT; do
    sd="$tmp/sig_$sig"
    mkdir -p "$sd"
    (cd "$sd" && exec "$bin" generate "${small[@]}" --steps 400 --no-text-cache -o o.mp4 --wav a.wav --png-dir f \
        >/dev/null 2>"$tmp/stderr_$sig") &
    pid=$!
    sleep 2
    kill -s "$sig" "$pid"
    wait "$pid"
    rc=$?
    want=$([ "$sig" = TERM ] && echo 143 || echo 130)
    [ "$rc" -eq "$want" ] && ok || { bad "SIG$sig: exit $rc, expected $want"; cat "$tmp/stderr_$sig"; }
    grep -q "interrupted by SIG$sig" "$tmp/stderr_$sig" && ok || bad "SIG$sig: no message: $(cat "$tmp/stderr_$sig")"
    [ -z "$(ls -A "$sd")" ] && ok || bad "SIG$sig left files: $(ls -A "$sd")"
done

# ---- ltx-pipelines' flag names (#14): the same run as the short names, bit for bit ----
names="$tmp/names"
mkdir -p "$names"
tiny=(--height 64 --width 96 --threads 2)
if (cd "$names" && "$bin" generate "${tiny[@]}" --steps 2 --frames 9 --fps 24 --guidance-scale 2 \
        --audio-guidance-scale 5 --stg-scale 0.5 --rescale 0.3 --modality-scale 2 --stg-block 1 --wav a.wav \
        >/dev/null 2>"$tmp/stderr") &&
   (cd "$names" && "$bin" generate "${tiny[@]}" --num-inference-steps 2 --num-frames 9 --frame-rate 24 \
        --video-cfg-guidance-scale 2 --audio-cfg-guidance-scale 5 --video-stg-guidance-scale 0.5 \
        --audio-stg-guidance-scale 0.5 --video-rescale-scale 0.3 --audio-rescale-scale 0.3 \
        --a2v-guidance-scale 2 --v2a-guidance-scale 2 --video-stg-blocks 1 --audio-stg-blocks 1 \
        --video-skip-step 0 --audio-skip-step 0 --wav b.wav >/dev/null 2>"$tmp/stderr") &&
   (cd "$names" && "$bin" generate "${tiny[@]}" --num-inference-steps 2 --num-frames 9 --video-cfg-guidance-scale 2 \
        --audio-cfg-guidance-scale 5 --stg-scale 0.5 --rescale 0.3 --modality-scale 2 --stg-block 1 \
        --audio-stg-guidance-scale 0 --wav c.wav >/dev/null 2>"$tmp/stderr"); then
    cmp -s "$names/a.wav" "$names/b.wav" && ok || bad "ltx-pipelines' flag names do not reproduce the short names' run"
    cmp -s "$names/a.wav" "$names/c.wav" && bad "--audio-stg-guidance-scale 0 changed nothing" || ok
else
    bad "generate with ltx-pipelines' flag names failed: $(cat "$tmp/stderr")"
fi
if (cd "$names" && "$bin" generate "${tiny[@]}" --steps 2 --frames 9 --seed -1 --wav r.wav >"$tmp/stdout" 2>"$tmp/stderr"); then
    grep -qE "^seed: [0-9]+" "$tmp/stdout" && ok || bad "--seed -1 does not print the seed it drew"
else
    bad "--seed -1 failed: $(cat "$tmp/stderr")"
fi
expect_refusal "two STG blocks" "one block for both streams" --video-stg-blocks 0 --audio-stg-blocks 1 -o o.mp4
expect_refusal "an STG block list" "one block for both streams" --video-stg-blocks 0 1 -o o.mp4
expect_refusal "skip steps" "skipping denoising steps is not implemented" --video-skip-step 1 -o o.mp4

# ---- the distilled pipeline (#14): refusals before any work, then a run with every output ----
ups="$src/weights/tiny/ltx2-tiny-upsampler-spatial-x2.safetensors"
dsmall=(--height 128 --width 128 --frames 9 --threads 2)
expect_refusal "distilled without upsampler" "needs --spatial-upsampler-path" --pipeline distilled -o o.mp4
expect_refusal "distilled with steps" "fixed sigmas without guidance" --pipeline distilled --spatial-upsampler-path "$ups" --steps 4 -o o.mp4
expect_refusal "distilled with CFG" "fixed sigmas without guidance" --pipeline distilled --spatial-upsampler-path "$ups" --guidance-scale 2 -o o.mp4
expect_refusal "distilled with a negative prompt" "negative prompt do not apply" --pipeline distilled --spatial-upsampler-path "$ups" --prompt "a cat" --negative-prompt "dog" -o o.mp4
expect_refusal "distilled size 96" "multiples of 64" --pipeline distilled --spatial-upsampler-path "$ups" --width 96 --height 128 -o o.mp4
expect_refusal "upsampler on one stage" "does not upsample" --pipeline one-stage --spatial-upsampler-path "$ups" -o o.mp4
expect_refusal "pipeline name" "one-stage, distilled or two-stage" --pipeline three-stage -o o.mp4
expect_refusal "missing upsampler file" "no such readable file" --pipeline distilled --spatial-upsampler-path "$tmp/nope.safetensors" -o o.mp4
# a dev checkpoint (by its Lightricks name) is not run on the distilled sigmas
ln -s "$src/weights/tiny/ltx2-tiny-2.0.safetensors" "$tmp/ltx-2-19b-dev.safetensors"
ln -s "$src/weights/tiny/ltx2-tiny-2.0.safetensors" "$tmp/ltx-2-19b-distilled.safetensors"
expect_refusal "distilled on dev" "name says dev" --pipeline distilled --checkpoint-path "$tmp/ltx-2-19b-dev.safetensors" \
    --spatial-upsampler-path "$ups" --prompt-embeds "$src/weights/tiny/prompt_embeds_positive.safetensors" -o o.mp4
# a distilled file name picks the distilled pipeline, and says why
expect_refusal "distilled by name, no upsampler" "the checkpoint's name says distilled" \
    --checkpoint-path "$tmp/ltx-2-19b-distilled.safetensors" --prompt-embeds "$src/weights/tiny/prompt_embeds_positive.safetensors" -o o.mp4
# the other upsamplers (#14 item 2): the sizes and frames their stage 1 needs, checked before any work,
# then a run of each with its outputs at the final size
ups_t="$src/weights/tiny/ltx2-tiny-upsampler-temporal-x2.safetensors"
ups_15="$src/weights/tiny/ltx2-tiny-upsampler-spatial-x1.5.safetensors"
expect_refusal "temporal upsampler, 9 frames" "16k + 1" --pipeline distilled "${dsmall[@]}" \
    --spatial-upsampler-path "$ups_t" --wav a.wav
expect_refusal "temporal upsampler, image on an odd frame" "even frame" --pipeline distilled --height 64 --width 96 \
    --frames 17 --spatial-upsampler-path "$ups_t" --image "$src/tests/golden/data/i2v_image.png" 3 1 --wav a.wav
expect_refusal "x1.5 upsampler, 128x128" "multiples of 96" --pipeline distilled "${dsmall[@]}" \
    --spatial-upsampler-path "$ups_15" --wav a.wav
png_size() { # width x height from a PNG's IHDR
    od -An -tu1 -j16 -N8 "$1" | awk '{ printf "%dx%d", $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8 }'
}
scales="$tmp/scales"
mkdir -p "$scales"
if (cd "$scales" && "$bin" generate --pipeline distilled --spatial-upsampler-path "$ups_t" --height 64 --width 96 \
        --frames 17 --threads 2 --image "$src/tests/golden/data/i2v_image.png" 16 0.8 --png-dir t --wav t.wav \
        >"$tmp/stdout" 2>"$tmp/stderr"); then
    grep -q "^latent upsampler: temporal x2: stage 1 at 96x64x9 @ 12 fps" "$tmp/stdout" && ok ||
        bad "the temporal upsampler's line: $(grep upsampler "$tmp/stdout")"
    [ "$(ls "$scales/t" | grep -c '^frame_.*\.png$')" -eq 17 ] && ok || bad "expected 17 PNG frames (temporal x2)"
    [ "$(png_size "$scales/t/$(ls "$scales/t" | head -1)")" = 96x64 ] && ok || bad "temporal x2 frames are not 96x64"
else
    bad "generate with the temporal upsampler failed"; cat "$tmp/stderr"
fi
if (cd "$scales" && "$bin" generate --pipeline distilled --spatial-upsampler-path "$ups_15" --height 96 --width 192 \
        --frames 9 --threads 2 --png-dir s --wav s.wav >"$tmp/stdout" 2>"$tmp/stderr"); then
    grep -q "^latent upsampler: spatial x1.5: stage 1 at 128x64x9 @ 24 fps" "$tmp/stdout" && ok ||
        bad "the x1.5 upsampler's line: $(grep upsampler "$tmp/stdout")"
    [ "$(png_size "$scales/s/$(ls "$scales/s" | head -1)")" = 192x96 ] && ok || bad "x1.5 frames are not 192x96"
    head -c 4 "$scales/s.wav" | grep -q RIFF && ok || bad "x1.5 s.wav is not a RIFF file"
else
    bad "generate with the x1.5 upsampler failed"; cat "$tmp/stderr"
fi
dist="$tmp/distilled"
mkdir -p "$dist"
if (cd "$dist" && "$bin" generate --distilled-checkpoint-path "$src/weights/tiny/ltx2-tiny-2.3.safetensors" \
        --prompt-embeds "$src/weights/tiny/prompt_embeds_positive.safetensors" --spatial-upsampler-path "$ups" \
        "${dsmall[@]}" --seed 7 --wav a.wav --png-dir frames --dump dump >"$tmp/stdout" 2>"$tmp/stderr"); then
    ok
else
    bad "generate --distilled-checkpoint-path failed"; cat "$tmp/stderr"
fi
grep -q "^pipeline: distilled (--distilled-checkpoint-path)" "$tmp/stdout" && ok || bad "the pipeline line: $(grep pipeline "$tmp/stdout")"
grep -q "(11 steps" "$tmp/stdout" && grep -q "| upsample " "$tmp/stdout" && ok || bad "timings: $(grep timings "$tmp/stdout")"
[ "$(ls "$dist/frames" 2>/dev/null | grep -c '^frame_.*\.png$')" -eq 9 ] && ok || bad "expected 9 distilled PNG frames"
head -c 4 "$dist/a.wav" 2>/dev/null | grep -q RIFF && ok || bad "distilled a.wav is not a RIFF file"
# the final size decoded in tiles (#14 item 2): 128 x 128 in 64-pixel tiles, every frame written, the same
# latents as the untiled run (the decode alone differs)
if (cd "$dist" && "$bin" generate --distilled-checkpoint-path "$src/weights/tiny/ltx2-tiny-2.3.safetensors" \
        --prompt-embeds "$src/weights/tiny/prompt_embeds_positive.safetensors" --spatial-upsampler-path "$ups" \
        "${dsmall[@]}" --seed 7 --vae-tile 64 --wav t.wav --png-dir tiled >/dev/null 2>"$tmp/stderr"); then
    [ "$(ls "$dist/tiled" 2>/dev/null | grep -c '^frame_.*\.png$')" -eq 9 ] && ok || bad "tiled distilled: expected 9 frames"
    cmp -s "$dist/a.wav" "$dist/t.wav" && ok || bad "tiling the video decode changed the audio"
else
    bad "distilled with --vae-tile failed"; cat "$tmp/stderr"
fi
for f in stage_1_noise_video stage_1_step_007_video upsampled_video_latent stage_2_noise_video stage_2_step_002_video video_latent; do
    [ -f "$dist/dump/$f.npy" ] || { bad "no distilled dump $f.npy"; continue; }
    ok
done
# ---- the two-stage pipeline and LoRAs (#14) ----
dl="$src/weights/tiny/ltx2-tiny-lora-distilled-2.0.safetensors"
style="$src/weights/tiny/ltx2-tiny-lora-style-2.0.safetensors"
expect_refusal "two-stage without the distilled LoRA" "needs --distilled-lora" --pipeline two-stage --spatial-upsampler-path "$ups" -o o.mp4
expect_refusal "distilled LoRA on distilled" "--distilled-lora is for the two-stage" --pipeline distilled --spatial-upsampler-path "$ups" --distilled-lora "$dl" -o o.mp4
expect_refusal "two-stage on a distilled model" "is distilled: use --pipeline distilled" --pipeline two-stage \
    --checkpoint-path "$tmp/ltx-2-19b-distilled.safetensors" --spatial-upsampler-path "$ups" --distilled-lora "$dl" \
    --prompt-embeds "$src/weights/tiny/prompt_embeds_positive.safetensors" -o o.mp4
expect_refusal "a missing LoRA" "no such readable file" --lora "$tmp/nope.safetensors" 0.5 -o o.mp4
expect_refusal "a LoRA without a file" "needs a file" --lora -o o.mp4
expect_refusal "a LoRA strength inf" "not a finite number" --lora "$style" inf -o o.mp4
# the library's refusals come before the DiT runs: a file that is no LoRA, a LoRA for another model
expect_refusal "an upsampler as a LoRA" "not a LoRA pair" "${small[@]}" --lora "$ups" --wav a.wav
expect_refusal "a 2.3 LoRA on 2.0" "no Linear weight of this DiT matches" "${small[@]}" \
    --lora "$src/weights/tiny/ltx2-tiny-lora-distilled-2.3.safetensors" --wav a.wav
two="$tmp/two_stage"
mkdir -p "$two"
if (cd "$two" && "$bin" generate "${dsmall[@]}" --steps 2 --spatial-upsampler-path "$ups" --distilled-lora "$dl" \
        --lora "$style" 0.8 --seed 7 --wav a.wav --png-dir frames >"$tmp/stdout" 2>"$tmp/stderr"); then
    ok
else
    bad "generate two-stage failed"; cat "$tmp/stderr"
fi
grep -q "^pipeline: two-stage (--distilled-lora)" "$tmp/stdout" && ok || bad "two-stage pipeline line: $(grep pipeline "$tmp/stdout")"
grep -q "^lora: .*style-2.0.safetensors (strength 0.8)" "$tmp/stdout" && ok || bad "no lora line: $(cat "$tmp/stdout")"
grep -q "(5 steps" "$tmp/stdout" && ok || bad "two-stage steps: $(grep timings "$tmp/stdout")"
[ "$(ls "$two/frames" 2>/dev/null | grep -c '^frame_.*\.png$')" -eq 9 ] && ok || bad "expected 9 two-stage PNG frames"
# the user LoRA changes the result; the same run again is bit for bit the same
if (cd "$two" && "$bin" generate "${dsmall[@]}" --steps 2 --spatial-upsampler-path "$ups" --distilled-lora "$dl" \
        --seed 7 --wav b.wav >/dev/null 2>"$tmp/stderr") &&
   (cd "$two" && "$bin" generate "${dsmall[@]}" --steps 2 --spatial-upsampler-path "$ups" --distilled-lora "$dl" \
        --lora "$style" 0.8 --seed 7 --wav c.wav >/dev/null 2>"$tmp/stderr"); then
    ! cmp -s "$two/a.wav" "$two/b.wav" && ok || bad "--lora did not change the two-stage run"
    cmp -s "$two/a.wav" "$two/c.wav" && ok || bad "the two-stage run is not reproducible"
else
    bad "two-stage reruns failed"; cat "$tmp/stderr"
fi

# ---- image to video (#14): refusals, and a run through the H.264 round trip at the default CRF ----
img="$src/tests/golden/data/i2v_image.png"
expect_refusal "enhance with an image, no system prompt" "image-to-video system prompt" --prompt "a cat" --enhance-prompt --image "$img" 0 1 -o o.mp4
# --enhance-prompt with an image: ltx-pipelines' image-to-video enhancement, the image through Gemma's
# vision tower (test_gemma_enhance checks it against transformers)
if (cd "$tmp" && "$bin" generate "${small[@]}" --guidance-scale 1 --audio-guidance-scale 1 --no-text-cache \
        --prompt "A cat" --enhance-prompt --enhance-system-prompt "$src/tests/data/enhance_system_prompt.txt" \
        --enhance-max-tokens 4 --image "$img" 0 1 --wav ei.wav >/dev/null 2>"$tmp/stderr"); then ok; else bad "--enhance-prompt with an image failed"; cat "$tmp/stderr"; fi
grep -q "through the vision tower" "$tmp/stderr" && ok || bad "the image did not go through the vision tower"
expect_refusal "image without strength" "needs PATH FRAME_IDX STRENGTH" --image "$img" 0 -o o.mp4
expect_refusal "image strength 2" "must be in \[0, 1\]" --image "$img" 0 2 -o o.mp4
expect_refusal "image CRF 60" "integer in \[0, 51\]" --image "$img" 0 1 60 -o o.mp4
expect_refusal "missing image" "no such readable file" --image "$tmp/nope.png" 0 1 -o o.mp4
expect_refusal "image past the clip" "outside the clip of 17 frames" "${small[@]}" --image "$img" 17 1 --wav a.wav
expect_refusal "two images for one frame" "both condition frame 8" "${small[@]}" --image "$img" 8 1 --image "$img" 8 0.5 --wav a.wav
i2v="$tmp/i2v"
mkdir -p "$i2v"
if (cd "$i2v" && "$bin" generate "${small[@]}" --image "$img" 0 1.0 --image "$img" 16 0.8 0 --wav a.wav --png-dir f \
        >"$tmp/stdout" 2>"$tmp/stderr"); then
    ok
else
    bad "generate --image failed"; cat "$tmp/stderr"
fi
grep -q "^image: .*i2v_image.png at frame 0, strength 1, CRF 33" "$tmp/stdout" && ok || bad "no image line: $(cat "$tmp/stdout")"
grep -q "^image: .*i2v_image.png at frame 16, strength 0.8, CRF 0" "$tmp/stdout" && ok || bad "no keyframe line: $(cat "$tmp/stdout")"
[ "$(ls "$i2v/f" 2>/dev/null | grep -c '^frame_.*\.png$')" -eq 17 ] && ok || bad "expected 17 image-to-video PNG frames"
if (cd "$i2v" && "$bin" generate "${small[@]}" --wav b.wav >/dev/null 2>"$tmp/stderr"); then
    ! cmp -s "$i2v/a.wav" "$i2v/b.wav" && ok || bad "--image did not change the run"
else
    bad "generate without --image failed"; cat "$tmp/stderr"
fi

# ---- audio to video (#14): refusals, and a one-stage run whose output audio is the file's window ----
aud="$src/tests/golden/data/a2vid_input.wav"  # 0.8 s, stereo 44.1 kHz
expect_refusal "audio start without audio" "need --audio-path" "${small[@]}" --audio-start-time 0.1 --wav a.wav
expect_refusal "missing audio" "no such readable file" --audio "$tmp/nope.wav" -o o.mp4
expect_refusal "negative audio start" "finite >= 0" --audio "$aud" --audio-start-time -1 -o o.mp4
expect_refusal "audio shorter than the clip" "give a longer audio" "${small[@]}" --audio "$aud" --audio-start-time 0.5 --wav a.wav
expect_refusal "audio max duration under the clip" "maximum duration" "${small[@]}" --audio "$aud" --audio-max-duration 0.2 --wav a.wav
a2v="$tmp/a2v"
mkdir -p "$a2v"
if (cd "$a2v" && "$bin" generate "${small[@]}" --audio-path "$aud" --audio-start-time 0.05 --wav a.wav --png-dir f \
        >"$tmp/stdout" 2>"$tmp/stderr"); then
    ok
else
    bad "generate --audio-path failed"; cat "$tmp/stderr"
fi
grep -q "^audio: .*a2vid_input.wav from 0.05 s for the clip's 0.708333 s: held in every stage" "$tmp/stdout" && ok \
    || bad "no audio line: $(cat "$tmp/stdout")"
[ "$(ls "$a2v/f" 2>/dev/null | grep -c '^frame_.*\.png$')" -eq 17 ] && ok || bad "expected 17 audio-to-video PNG frames"
# the WAV written is the input's window: 44.1 kHz stereo, round(17 / 24 * 44100) = 31238 samples
[ "$(od -An -tu4 -j24 -N4 "$a2v/a.wav" 2>/dev/null | tr -d ' ')" = 44100 ] && ok || bad "a2v WAV rate is not the input's"
[ "$(od -An -tu4 -j40 -N4 "$a2v/a.wav" 2>/dev/null | tr -d ' ')" = $((31238 * 4)) ] && ok \
    || bad "a2v WAV data size $(od -An -tu4 -j40 -N4 "$a2v/a.wav") is not the window's"

# ---- replaying a run from its --dump (#15 item 5): contexts, sigmas and noise injected give the same
# run bit for bit; the dumped latent decodes; per-pass dumps; --dump-call picks the DiT call ----
rp="$tmp/replay"
mkdir -p "$rp"
if (cd "$rp" && "$bin" generate "${small[@]}" --seed 11 --dump d1 --wav a.wav >/dev/null 2>"$tmp/stderr") &&
   (cd "$rp" && "$bin" generate "${small[@]}" --context d1 --sigmas d1 --noise d1 --dump d2 --wav b.wav \
        >"$tmp/stdout" 2>"$tmp/stderr"); then
    cmp -s "$rp/a.wav" "$rp/b.wav" && ok || bad "the replayed run's audio differs"
    cmp -s "$rp/d1/video_latent.npy" "$rp/d2/video_latent.npy" && ok || bad "the replayed run's video latent differs"
    grep -q "contexts from d1" "$tmp/stderr" "$tmp/stdout" && ok || bad "the replay does not say where its contexts come from"
else
    bad "dump / replay failed"; cat "$tmp/stderr"
fi
for f in step_000_pass_cond_video step_000_pass_uncond_audio step_001_pass_ptb_video step_001_pass_mod_audio \
         step_000_guided_video step_001_x0_audio negative_video_context video_noise audio_noise; do
    [ -f "$rp/d1/$f.npy" ] && ok || bad "no $f.npy in the dump"
done
if (cd "$rp" && "$bin" decode d1/video_latent.npy --checkpoint "$src/weights/tiny/ltx2-tiny-2.0.safetensors" \
        --png-dir dec >/dev/null 2>"$tmp/stderr"); then
    [ "$(ls "$rp/dec" | grep -c '^frame_.*\.png$')" -eq 17 ] && ok || bad "ltx2 decode of the dumped latent: not 17 frames"
else
    bad "ltx2 decode cannot read the dumped latent"; cat "$tmp/stderr"
fi
if (cd "$rp" && "$bin" generate "${small[@]}" --seed 11 --dump d3 --dump-call 5 >/dev/null 2>"$tmp/stderr"); then
    ! cmp -s "$rp/d1/dit/adaln_single.out.npy" "$rp/d3/dit/adaln_single.out.npy" && ok \
        || bad "--dump-call 5 dumped the first call's DiT"
else
    bad "--dump-call 5 failed"; cat "$tmp/stderr"
fi
expect_refusal "dump call past the run" "model calls" "${small[@]}" --dump d --dump-call 8
expect_refusal "dump call without dump" "needs --dump" --dump-call 1 -o o.mp4
expect_refusal "context and prompt embeds" "give one of them" --context "$rp/d1" --prompt-embeds "$rp/d1/video_context.npy" -o o.mp4
expect_refusal "steps against injected sigmas" "sigmas of" "${small[@]}" --sigmas "$rp/d1/sigmas.npy" --steps 5 --wav a.wav

# the same run by --pipeline distilled gives the same audio, bit for bit
if (cd "$dist" && "$bin" generate --checkpoint-path "$src/weights/tiny/ltx2-tiny-2.3.safetensors" --pipeline distilled \
        --prompt-embeds "$src/weights/tiny/prompt_embeds_positive.safetensors" --spatial-upsampler-path "$ups" \
        "${dsmall[@]}" --seed 7 --wav b.wav >/dev/null 2>"$tmp/stderr"); then
    cmp -s "$dist/a.wav" "$dist/b.wav" && ok || bad "--pipeline distilled and --distilled-checkpoint-path differ"
else
    bad "generate --pipeline distilled failed"; cat "$tmp/stderr"
fi

# ---- checkpoint sources: a diffusers directory, split files (tests/golden/gen_tiny_split.py) ----
srcs="$tmp/sources"
mkdir -p "$srcs"
tiny="$src/weights/tiny"
if (cd "$srcs" && "$bin" generate --checkpoint-path "$tiny/ltx2-tiny-2.3.safetensors" \
        --prompt-embeds "$tiny/prompt_embeds_positive.safetensors" --negative-prompt-embeds "$tiny/prompt_embeds_negative.safetensors" "${small[@]}" --wav single.wav >/dev/null 2>"$tmp/stderr" &&
    "$bin" generate --checkpoint-path "$tiny/ltx2-tiny-diffusers-2.3/" \
        --prompt-embeds "$tiny/prompt_embeds_positive.safetensors" --negative-prompt-embeds "$tiny/prompt_embeds_negative.safetensors" "${small[@]}" --wav dir.wav >"$tmp/stdout" 2>"$tmp/stderr"); then
    cmp -s "$srcs/single.wav" "$srcs/dir.wav" && ok || bad "the diffusers directory's audio differs from the single file's"
    grep -q "^model: .*ltx2-tiny-diffusers-2.3" "$tmp/stdout" && ok || bad "the model line: $(grep model "$tmp/stdout")"
else
    bad "generate from a diffusers directory failed"; cat "$tmp/stderr"
fi
split=("$tiny/split-2.3/transformer.safetensors" "$tiny/split-2.3/connectors.safetensors" "$tiny/split-2.3/video_vae.safetensors")
if (cd "$srcs" && "$bin" generate --checkpoint-path "${split[@]}" "$tiny/split-2.3/audio_vae.safetensors" \
        --prompt-embeds "$tiny/prompt_embeds_positive.safetensors" --negative-prompt-embeds "$tiny/prompt_embeds_negative.safetensors" "${small[@]}" --wav split.wav >/dev/null 2>"$tmp/stderr"); then
    cmp -s "$srcs/single.wav" "$srcs/split.wav" && ok || bad "the split files' audio differs from the single file's"
else
    bad "generate from split files failed"; cat "$tmp/stderr"
fi
expect_refusal "split files without the audio VAE" "no audio VAE, vocoder in the given files" \
    --checkpoint-path "${split[@]}" --prompt-embeds "$tiny/prompt_embeds_positive.safetensors" --negative-prompt-embeds "$tiny/prompt_embeds_negative.safetensors" "${small[@]}" \
    -o o.mp4 --wav a.wav
expect_refusal "a directory that is not diffusers" "not a diffusers LTX-2 directory" \
    --checkpoint-path "$tiny" --prompt-embeds "$tiny/prompt_embeds_positive.safetensors" --negative-prompt-embeds "$tiny/prompt_embeds_negative.safetensors" "${small[@]}" --wav a.wav
# MaxDiffusion's converted-weights cache in place of the DiT (#15 item 6): it holds the directory's weights
# (tests/golden/gen_maxdiffusion_weights.py), so the run is the directory's bit for bit; a file that is not
# a cache, or the cache of another model, is refused before any file is written
pe=(--prompt-embeds "$tiny/prompt_embeds_positive.safetensors" --negative-prompt-embeds "$tiny/prompt_embeds_negative.safetensors")
mdw="$src/tests/golden/data/md_weights"
if (cd "$srcs" && "$bin" generate --checkpoint-path "$tiny/ltx2-tiny-diffusers-2.3" \
        --maxdiffusion-weights "${mdw}_2.3_bfloat16_scan1.safetensors" "${pe[@]}" "${small[@]}" --wav md.wav \
        >"$tmp/stdout" 2>"$tmp/stderr"); then
    cmp -s "$srcs/dir.wav" "$srcs/md.wav" && ok || bad "the run on MaxDiffusion's weights differs from the directory's"
    grep -q "MaxDiffusion's converted-weights cache" "$tmp/stderr" && ok || bad "the run does not say where its DiT is from"
else
    bad "generate with --maxdiffusion-weights failed"; cat "$tmp/stderr"
fi
# the distilled pipeline from a diffusers directory finds its latent_upsampler/ without
# --spatial-upsampler-path, beside a MaxDiffusion cache too, with the same result
if (cd "$srcs" && "$bin" generate --pipeline distilled --checkpoint-path "$tiny/ltx2-tiny-diffusers-2.3" \
        --prompt-embeds "$tiny/prompt_embeds_positive.safetensors" --height 128 --width 128 --num-frames 9 \
        --wav dist_dir.wav >/dev/null 2>"$tmp/stderr" &&
    "$bin" generate --pipeline distilled --checkpoint-path "$tiny/ltx2-tiny-diffusers-2.3" \
        --maxdiffusion-weights "${mdw}_2.3_bfloat16_scan1.safetensors" \
        --prompt-embeds "$tiny/prompt_embeds_positive.safetensors" --height 128 --width 128 --num-frames 9 \
        --wav dist_md.wav >/dev/null 2>"$tmp/stderr"); then
    cmp -s "$srcs/dist_dir.wav" "$srcs/dist_md.wav" && ok || bad "distilled on MaxDiffusion's weights differs"
else
    bad "distilled from a diffusers directory without --spatial-upsampler-path failed"; cat "$tmp/stderr"
fi
expect_refusal "not a MaxDiffusion cache" "not a MaxDiffusion converted-weights cache" \
    --checkpoint-path "$tiny/ltx2-tiny-diffusers-2.3" --maxdiffusion-weights "$tiny/ltx2-tiny-2.3.safetensors" \
    "${pe[@]}" "${small[@]}" --wav a.wav
# --precision tpu runs MaxDiffusion's bf16 weights only: its float32 cache is refused, naming why
expect_refusal "precision tpu on f32 weights" "cast the DiT's weights to bf16" \
    --checkpoint-path "$tiny/ltx2-tiny-diffusers-2.0" --maxdiffusion-weights "${mdw}_2.0_float32_scan0.safetensors" \
    "${pe[@]}" "${small[@]}" --semantics maxdiffusion --device cpu --precision tpu --wav a.wav
expect_refusal "another model's MaxDiffusion cache" "DiT weights do not match the config" \
    --checkpoint-path "$tiny/ltx2-tiny-diffusers-2.3" --maxdiffusion-weights "${mdw}_2.0_bfloat16_scan1.safetensors" \
    "${pe[@]}" "${small[@]}" -o o.mp4 --wav a.wav

# ---- the default command (embedded model), small so the test stays quick ----
out="$tmp/run"
mkdir -p "$out"
mp4=()
# MP4 only when this build has FFmpeg (its refusal names FFmpeg) and ffprobe can check it.
if command -v ffprobe >/dev/null && ! "$bin" generate -o "$tmp/x.mp4" --dump "$tmp/no/such/dir" 2>&1 | grep -q FFmpeg; then
    mp4=(-o out.mp4)
fi
if (cd "$out" && "$bin" generate "${small[@]}" --seed 123 --wav a.wav --png-dir frames --dump dump "${mp4[@]}" >"$tmp/stdout" 2>"$tmp/stderr"); then
    ok
else
    bad "generate failed"; cat "$tmp/stderr"
fi
grep -q "embedded tiny" "$tmp/stdout" && ok || bad "does not say it used the embedded model"
head -1 "$tmp/stdout" | grep -q "^device: " && ok || bad "the first line does not name the device: $(head -1 "$tmp/stdout")"
grep -q "seed: 123" "$tmp/stdout" && ok || bad "seed not printed"
grep -q "timings: load" "$tmp/stdout" && ok || bad "no timing summary"
[ "$(ls "$out/frames" 2>/dev/null | grep -c '^frame_.*\.png$')" -eq 17 ] && ok || bad "expected 17 PNG frames"
head -c 4 "$out/a.wav" 2>/dev/null | grep -q RIFF && ok || bad "a.wav is not a RIFF file"
# --dump: pipeline tensors at the top, the DiT's first call under dit/ with reference module names
[ -f "$out/dump/video_latent.npy" ] && ok || bad "no dump/video_latent.npy"
[ -f "$out/dump/dit/transformer_blocks.0.attn1.out.npy" ] && [ -f "$out/dump/dit/adaln_single.out.npy" ] && ok \
    || bad "DiT intermediates missing from dump/dit: $(ls "$out/dump/dit" 2>/dev/null | head -3)"
"$bin" compare "$out/dump/dit" "$out/dump/dit" >/dev/null 2>&1 && ok || bad "compare cannot read the DiT dump"
# a reused --png-dir: refused while it holds files; --overwrite replaces them, so a shorter run
# leaves none of the longer one's frames behind
if (cd "$out" && "$bin" generate "${small[@]}" --frames 9 --png-dir frames >/dev/null 2>"$tmp/stderr"); then
    bad "a non-empty --png-dir was accepted"
else
    grep -q "is not empty" "$tmp/stderr" && ok || bad "non-empty --png-dir: $(cat "$tmp/stderr")"
fi
if (cd "$out" && "$bin" generate "${small[@]}" --frames 9 --png-dir frames --overwrite >/dev/null 2>"$tmp/stderr"); then
    n=$(ls "$out/frames" | grep -c '^frame_.*\.png$')
    [ "$n" -eq 9 ] && ok || bad "--overwrite left $n frames, expected 9"
else
    bad "--overwrite failed: $(cat "$tmp/stderr")"
fi
if [ -f "$out/out.mp4" ]; then
    probe="$(ffprobe -v error -show_entries stream=codec_name,nb_frames -show_entries format_tags=seed -of compact "$out/out.mp4")"
    echo "$probe" | grep -q "codec_name=h264|nb_frames=17" && ok || bad "mp4 video: $probe"
    echo "$probe" | grep -q "codec_name=aac" && ok || bad "mp4 audio: $probe"
    echo "$probe" | grep -q "seed=123" && ok || bad "mp4 seed tag: $probe"
else
    echo "note: no ffprobe or no FFmpeg build: MP4 checks skipped"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
