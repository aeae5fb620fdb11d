#!/usr/bin/env bash
# Regenerate every committed golden / tiny checkpoint from the pinned reference versions.
# Usage: tests/golden/regen.sh            (uses $GOLDEN_VENV or tests/golden/.venv; creates it if missing)
#        GOLDEN_VENV=/work/venv tests/golden/regen.sh
# CI never runs this: it only reads the committed outputs.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${GOLDEN_VENV:-$here/.venv}"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --upgrade pip
    "$venv/bin/pip" install -r "$here/requirements.txt"
fi
py="$venv/bin/python"
cd "$root"
# Order matters: the diffusers export and the README read the tiny checkpoints.
for gen in gen_ops.py gen_dtype.py gen_tokenizer_goldens.py gen_gemma_goldens.py gen_tiny_ltx2.py gen_full_synthetic.py gen_audio_goldens.py gen_audio_encoder_goldens.py gen_tiny_diffusers.py gen_tiny_split.py \
           gen_tiny_readme.py \
           gen_dit_goldens.py gen_dit_fp8_goldens.py gen_dit_fp8_cast_goldens.py gen_dit_diffusers_golden.py gen_stg_goldens.py gen_connector_goldens.py gen_vae_goldens.py gen_vae_tiled_goldens.py gen_vae_tcond_goldens.py \
           gen_sampler_goldens.py \
           gen_prompt_embeds.py gen_e2e_golden.py gen_distilled_golden.py gen_lora_golden.py gen_two_stage_golden.py gen_upsampler_scales_golden.py gen_i2v_golden.py gen_a2vid_golden.py gen_text_goldens.py \
           gen_gemma_generate.py gen_gemma_enhance.py gen_gemma_vision.py; do
    echo "== $gen"
    "$py" "$here/$gen"
done
echo "== gen_compare_data.py"
"$py" "$root/tests/data/compare/gen_compare_data.py"
echo "done; review 'git status' / 'git diff --stat' before committing"
