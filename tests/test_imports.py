"No side effects on import: importing any module of fastai_paranoid leaves fastai's `defaults` and every RNG state as they were."
import json, os, pkgutil, subprocess, sys, textwrap
from pathlib import Path
import fastai_paranoid

MODULES = sorted(f"fastai_paranoid.{m.name}" for m in pkgutil.iter_modules(fastai_paranoid.__path__))

# One interpreter imports torch, numpy and the part of fastai a user needs for a Learner, then forks once per module:
# each child is a fresh process in which nothing of fastai_paranoid was imported yet, and imports that one module.
PROBE = textwrap.dedent('''
    import importlib, json, os, random, sys
    import numpy as np, torch
    {baseline}
    from fastai.callback.core import defaults

    def state():
        d = {{k: (list(v) if isinstance(v, list) else v) for k, v in vars(defaults).items()}}
        return ({{k: repr(v) for k, v in d.items()}}, random.getstate(), np.random.get_state()[1].tobytes(),
                torch.get_rng_state().numpy().tobytes(), torch.initial_seed())

    results = {{}}
    for name in json.loads(sys.argv[1]):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read)
            before = state()
            try:
                importlib.import_module(name)
                after = state()
                changes = [f"defaults.{{k}}: {{before[0].get(k)}} -> {{after[0].get(k)}}"
                           for k in sorted(set(before[0]) | set(after[0])) if before[0].get(k) != after[0].get(k)]
                changes += [f"{{rng}} RNG state changed" for rng, a, b in zip(['python', 'numpy', 'torch', 'torch seed'], before[1:], after[1:]) if a != b]
            except Exception as e: changes = [f"import failed: {{type(e).__name__}}: {{e}}"]
            os.write(write, json.dumps(changes).encode())
            os._exit(0)
        os.close(write)
        with os.fdopen(read) as f: out = f.read()
        os.waitpid(pid, 0)
        results[name] = json.loads(out) if out else ['the child process died']
    print(json.dumps(results))
''')

def probe(modules, baseline='import fastai.learner'):
    env = {**os.environ, 'OMP_NUM_THREADS': '1', 'PYTHONWARNINGS': 'ignore'}
    out = subprocess.run([sys.executable, '-c', PROBE.format(baseline=baseline), json.dumps(modules)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])

import pytest

@pytest.fixture(scope='module')
def results(tmp_path_factory):
    "Every module of ours, fastai's own modules that register a callback, and a module that draws random numbers: one probe"
    tmp = tmp_path_factory.mktemp('draws')
    (tmp/'draws_on_import.py').write_text("import random, torch\nrandom.random()\ntorch.rand(1)\n")
    env_path = os.environ.get('PYTHONPATH', '')
    os.environ['PYTHONPATH'] = os.pathsep.join([str(tmp), env_path])
    try: return probe(MODULES + ['fastai.callback.progress', 'fastai.callback.schedule', 'fastai.distributed', 'fastai.callback.core', 'draws_on_import'])
    finally: os.environ['PYTHONPATH'] = env_path

def test_every_module_imports_without_side_effects(results):
    assert len(MODULES) > 10 and 'fastai_paranoid.leaks' in MODULES
    assert {m: results[m] for m in MODULES if results[m]} == {}

def test_the_probe_sees_a_side_effect(results):
    "The same probe on fastai's own modules that register a callback, and on one that draws: it must report them"
    for m in ['fastai.callback.progress', 'fastai.callback.schedule', 'fastai.distributed']:
        assert any('defaults.callbacks' in c and 'ProgressCallback' in c for c in results[m]), results[m]
    assert results['fastai.callback.core'] == []
    assert results['draws_on_import'] == ['python RNG state changed', 'torch RNG state changed']

def test_imported_before_fastai_the_defaults_are_fastais():
    "Imported first, before any of fastai: once the user imports fastai.learner, its defaults are what fastai alone gives"
    code = ("import os, sys\nimport torch\nfor first in ['', 'import fastai_paranoid.all']:\n"
            "    pid = os.fork()\n"
            "    if pid == 0:\n"
            "        exec(first)\n"
            "        import fastai.learner\n"
            "        from fastai.callback.core import defaults\n"
            "        print(repr(first), [c.__name__ for c in defaults.callbacks], flush=True)\n"
            "        os._exit(0)\n"
            "    os.waitpid(pid, 0)\n")
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, 'OMP_NUM_THREADS': '1', 'PYTHONWARNINGS': 'ignore'})
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.splitlines() == ["'' ['TrainEvalCallback', 'Recorder', 'CastToTensor']",
                                       "'import fastai_paranoid.all' ['TrainEvalCallback', 'Recorder', 'CastToTensor']"]

def test_lazily_read_fastai_classes_are_the_real_ones():
    "What the modules read from `sys.modules` instead of importing resolves to fastai's classes once the user imports them"
    import fastai.distributed, fastai.callback.schedule, fastai.callback.tracker, fastai.callback.progress
    from fastai_paranoid.compat import fastai_class as _fastai_class
    from fastai_paranoid.distributed import CrossRankConsistency, DistributedCPU
    assert _fastai_class('fastai.callback.schedule', 'LRFinder') is fastai.callback.schedule.LRFinder
    assert _fastai_class('fastai.callback.tracker', 'SaveModelCallback') is fastai.callback.tracker.SaveModelCallback
    assert _fastai_class('fastai.callback.progress', 'CSVLogger') is fastai.callback.progress.CSVLogger
    assert _fastai_class('not.imported', 'X') == ()
    assert CrossRankConsistency.order == fastai.distributed.DistributedTrainer.order - 1
    assert DistributedCPU.order == fastai.distributed.DistributedTrainer.order - 1

def test_the_library_works_without_fastais_optional_modules(tmp_path):
    "With only fastai.learner imported: paranoid(), a check that fits a copy, a fit; and none of the modules that register ProgressCallback"
    code = textwrap.dedent(f'''
        import sys, warnings
        from torch import nn
        from fastai.learner import Learner
        from fastai.torch_core import params
        from fastai_paranoid.all import *
        from fastai_paranoid.fixtures import xor_dls, build_mlp
        with paranoid(on_finding='raise'):
            learn = Learner(xor_dls(), build_mlp(), loss_func=nn.CrossEntropyLoss(), path={str(tmp_path)!r},
                            splitter=lambda m: [params(m[:2]), params(m[2:])])
            learn.freeze()
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                result = check_frozen(learn)
            learn.fit(1)
        loaded = [m for m in ('fastai.callback.progress', 'fastai.callback.schedule', 'fastai.distributed') if m in sys.modules]
        print(result.verdict, loaded)
    ''')
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, 'OMP_NUM_THREADS': '1', 'PYTHONWARNINGS': 'ignore'})
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == 'passed []'

def test_all_star_imports_every_public_module_and_no_name_twice():
    "`fastai_paranoid.all` is the whole public API: each module's `__all__` once, no name exported by two modules (the later would shadow)"
    import collections, importlib, pkgutil, fastai_paranoid
    import fastai_paranoid.all as everything
    tooling = {'all', 'cli', 'runner', 'pytest_plugin', 'ipython', '_modidx', # commands and entry points, imported by name
               'calibration', 'fixtures'} # testing modules (the calibration corpus, the seeds' tasks): scenarios, not API
    modules = sorted(m.name for m in pkgutil.iter_modules(fastai_paranoid.__path__) if m.name not in tooling)
    text = Path(everything.__file__).read_text()
    assert [m for m in modules if f"from .{m} import *" not in text] == []
    counts = collections.Counter(n for m in modules for n in importlib.import_module(f'fastai_paranoid.{m}').__all__)
    assert [n for n, k in counts.items() if k > 1] == []
    assert [m for m in ('fixtures', 'calibration') if f"from .{m} import" in text] == [] # outside `all`, as fastai.test_utils
