"""Import guard: make `import torchaudio` harmless when the installed wheel cannot load.

torchaudio on PyPI lags torch and refuses to import against a newer torch/CUDA build. ltx-core
uses it only for waveform preprocessing (mel spectrogram, resampling) and transformers/diffusers
only import it opportunistically; nothing our generators run needs it. If the real module
imports, it is used; otherwise an empty stand-in is registered. Import this before ltx_core,
transformers or diffusers.
"""
import importlib.machinery
import sys
import types

try:
    import torchaudio  # noqa: F401
except Exception:  # noqa: BLE001 - any import failure means "not usable"
    for _name in [n for n in sys.modules if n == "torchaudio" or n.startswith("torchaudio.")]:
        del sys.modules[_name]
    _ta = types.ModuleType("torchaudio")
    _ta.__spec__ = importlib.machinery.ModuleSpec("torchaudio", None)
    _ta.__version__ = "0+stub"
    _ta.transforms = types.SimpleNamespace()
    _ta.functional = types.SimpleNamespace()
    sys.modules["torchaudio"] = _ta
