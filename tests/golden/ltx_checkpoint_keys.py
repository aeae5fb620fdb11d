"""The components of a Lightricks single-file LTX-2 checkpoint as ltx-core 1.0.0 builds them from a
metadata config, with the map from each module's state_dict key to its checkpoint key (the inverse of
the SDOps ltx-core applies when loading). Shared by gen_tiny_ltx2.py (the tiny checkpoints) and
gen_full_synthetic.py (the full-size key sets). Import it after any change to ltx-core's Gemma
config (gen_tiny_ltx2 shrinks it): the embeddings processor reads those dims when built.
"""
from ltx_core.model.audio_vae import (
    AUDIO_VAE_DECODER_COMFY_KEYS_FILTER, AUDIO_VAE_ENCODER_COMFY_KEYS_FILTER, VOCODER_COMFY_KEYS_FILTER,
    AudioDecoderConfigurator, AudioEncoderConfigurator, VocoderConfigurator)
from ltx_core.model.transformer import LTXV_MODEL_COMFY_RENAMING_MAP, LTXModelConfigurator
from ltx_core.model.video_vae import (
    VAE_DECODER_COMFY_KEYS_FILTER, VAE_ENCODER_COMFY_KEYS_FILTER, VideoDecoderConfigurator,
    VideoEncoderConfigurator)
from ltx_core.text_encoders.gemma import EMBEDDINGS_PROCESSOR_KEY_OPS, EmbeddingsProcessorConfigurator


def dit_key(k):
    return "model.diffusion_model." + k


def text_key(k):
    for mod, ck in (("feature_extractor.aggregate_embed.", "text_embedding_projection.aggregate_embed."),
                    ("feature_extractor.video_aggregate_embed.", "text_embedding_projection.video_aggregate_embed."),
                    ("feature_extractor.audio_aggregate_embed.", "text_embedding_projection.audio_aggregate_embed."),
                    ("video_connector.", "model.diffusion_model.video_embeddings_connector."),
                    ("audio_connector.", "model.diffusion_model.audio_embeddings_connector.")):
        if k.startswith(mod):
            return ck + k[len(mod):]
    raise KeyError(f"unmapped embeddings-processor key {k}")


def _mk(prefix, part):
    def f(k):
        if k.startswith("per_channel_statistics."):
            return prefix + k
        return prefix + part + "." + k
    return f


def vocoder_key(k):
    return "vocoder." + k


def build_components(config):
    """(name, module, key_map, sd_ops, configurator) for every component of the single file."""
    return [
        ("transformer", LTXModelConfigurator.from_config(config), dit_key, LTXV_MODEL_COMFY_RENAMING_MAP,
         LTXModelConfigurator),
        ("embeddings_processor", EmbeddingsProcessorConfigurator.from_config(config), text_key,
         EMBEDDINGS_PROCESSOR_KEY_OPS, EmbeddingsProcessorConfigurator),
        ("video_encoder", VideoEncoderConfigurator.from_config(config), _mk("vae.", "encoder"),
         VAE_ENCODER_COMFY_KEYS_FILTER, VideoEncoderConfigurator),
        ("video_decoder", VideoDecoderConfigurator.from_config(config), _mk("vae.", "decoder"),
         VAE_DECODER_COMFY_KEYS_FILTER, VideoDecoderConfigurator),
        ("audio_encoder", AudioEncoderConfigurator.from_config(config), _mk("audio_vae.", "encoder"),
         AUDIO_VAE_ENCODER_COMFY_KEYS_FILTER, AudioEncoderConfigurator),
        ("audio_decoder", AudioDecoderConfigurator.from_config(config), _mk("audio_vae.", "decoder"),
         AUDIO_VAE_DECODER_COMFY_KEYS_FILTER, AudioDecoderConfigurator),
        ("vocoder", VocoderConfigurator.from_config(config), vocoder_key, VOCODER_COMFY_KEYS_FILTER,
         VocoderConfigurator),
    ]
