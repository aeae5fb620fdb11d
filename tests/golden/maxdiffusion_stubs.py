"""Import-only stand-ins for what MaxDiffusion's LTX-2 path imports but never runs on the CPU.

Used by gen_maxdiffusion_goldens.py. `install(src)` puts MaxDiffusion's `src/` first on sys.path and
registers, in sys.modules, empty modules for:

  transformers  ltx2_pipeline.py:50 imports AutoTokenizer, GemmaTokenizer(Fast) and
                Gemma3ForConditionalGeneration; the goldens inject the Gemma hidden states, the
                pipeline is built with text_encoder=None / tokenizer=None and never touches them.
  qwix          ltx2_pipeline.py:51 (quantisation; config.use_qwix_quantization is False and
                quantize_transformer is never called).
  aqt.*         models/quantizations.py:18-20 (imported by models/attention_flax.py; no quantisation).
  tensorflow    maxdiffusion_utils.py:21 (tf.data input pipelines for training).
  tensorboardX  max_utils.py:73 (training summaries).
  google.cloud.storage  max_utils.py:75 (GCS upload of configs / checkpoints).

Each stand-in answers every attribute with an object that raises if it is ever *called*, so a stub
can satisfy `from x import y` and annotations at import time but can never compute anything: if
MaxDiffusion's CPU path used one, the generator would fail instead of silently changing numbers.
A stub is registered only when the real package cannot be imported... except transformers, which
is always stubbed so that whatever transformers is installed (if any) plays no part.

torch is NOT stubbed: ltx2_utils.py reads the safetensors shards with safe_open(framework="pt") and
converts each tensor to numpy (_torch_tensor_to_numpy), so the real torch is needed by the loader.
If `import torch` fails in the JAX environment, the directory in MAXDIFFUSION_TORCH_SITE (a
site-packages holding torch; default /work/venv/lib/python3.11/site-packages) is APPENDED to
sys.path, so packages of the JAX environment always win.
"""
import importlib
import importlib.machinery
import os
import sys
import types


class _ImportOnly:
    def __init__(self, path):
        self._path = path

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _ImportOnly(self._path + "." + attr)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(f"maxdiffusion_stubs: import-only stand-in called: {self._path}")

    def __mro_entries__(self, bases):  # allows `class X(stub.Base)` at import time
        return (object,)


def _stub(name):
    mod = types.ModuleType(name)
    mod.__spec__ = importlib.machinery.ModuleSpec(name, None)
    mod.__path__ = []  # a package, so submodules can be registered below it

    def _getattr(attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _ImportOnly(name + "." + attr)

    mod.__getattr__ = _getattr
    sys.modules[name] = mod
    parent, _, child = name.rpartition(".")
    if parent and parent in sys.modules:
        setattr(sys.modules[parent], child, mod)
    return mod


def _importable(name):
    try:
        importlib.import_module(name)
        return True
    except Exception:  # noqa: BLE001  any failure means: stub it
        return False


STUBBED = []


def install(maxdiffusion_src):
    sys.path.insert(0, maxdiffusion_src)
    if not _importable("torch"):
        site = os.environ.get("MAXDIFFUSION_TORCH_SITE", "/work/venv/lib/python3.11/site-packages")
        sys.path.append(site)
        import torch  # noqa: F401  (fails loudly if the site has none)
    always = ["transformers"]
    groups = [["qwix"], ["aqt", "aqt.jax", "aqt.jax.v2", "aqt.jax.v2.flax"], ["tensorflow"], ["tensorboardX"],
              ["google.cloud", "google.cloud.storage"]]
    for name in always:
        _stub(name)
        STUBBED.append(name)
    for group in groups:
        if _importable(group[-1]):
            continue
        for name in group:
            if name == "google.cloud":
                import google  # the protobuf namespace package; only google.cloud is stood in
            _stub(name)
            STUBBED.append(name)
    return list(STUBBED)
