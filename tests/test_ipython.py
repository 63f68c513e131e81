"`%load_ext fastai_paranoid` in plain IPython (issue 27): `ipython file.ipy` and `ipython file.py` report what the guards found, as `ipython -c` and Jupyter do; a healthy file prints no report"
import os, subprocess, sys
import pytest
from cli_helpers import ROOT

CODE = '''from torch import nn
from fastai.basics import Learner
import fastai.callback.progress # learn.no_bar
from fastai_paranoid.fixtures import xor_dls, build_mlp
def fit(model):
    learn = Learner(xor_dls(), model, loss_func=nn.CrossEntropyLoss())
    with learn.no_bar(), learn.no_logging(): learn.fit(1, 1e-2)
model = build_mlp()
fit(model)
fit(MODEL)
print('the end of the file')
'''
LEAKY, HEALTHY = CODE.replace('MODEL', 'model'), CODE.replace('MODEL', 'build_mlp()') # the second fit continues the first's model, or a new one

def ipython(tmp_path, *args):
    "`ipython ARGS` in `tmp_path`, with a profile folder of its own (no user profile, no history file outside the test)"
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS='1', COLUMNS='100', IPYTHONDIR=str(tmp_path/'ipython'))
    res = subprocess.run([sys.executable, '-m', 'IPython', '--no-banner', *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=600) # a hang guard
    return res.returncode, res.stdout, res.stderr

@pytest.mark.slow
@pytest.mark.parametrize('how', ['ipy', 'py with --ext', 'py loading it', '-c'])
def test_plain_ipython_reports_the_findings_once(tmp_path, how):
    "The finding is reported once, after the file's own output; the healthy twin (run as a .ipy) reports nothing"
    for name, code in (('leaky', LEAKY), ('healthy', HEALTHY))[:2 if how == 'ipy' else 1]: # the healthy twin: once
        if how == 'ipy':
            (tmp_path/f'{name}.ipy').write_text('%load_ext fastai_paranoid\n' + code)
            args = [f'{name}.ipy']
        elif how == 'py with --ext': # as an IPython profile's `c.InteractiveShellApp.extensions = ['fastai_paranoid']` loads it
            (tmp_path/f'{name}.py').write_text(code)
            args = ['--ext', 'fastai_paranoid', f'{name}.py']
        elif how == 'py loading it':
            (tmp_path/f'{name}.py').write_text("get_ipython().run_line_magic('load_ext', 'fastai_paranoid')\n" + code)
            args = [f'{name}.py']
        else: args = ['-c', '%load_ext fastai_paranoid\n' + code]
        status, out, err = ipython(tmp_path, *args)
        assert status == 0, out + err
        assert 'the end of the file' in out, out + err
        if name == 'leaky':
            assert out.count('fastai-paranoid: 1 problem found in this') == 1, out
            report = out.split('fastai-paranoid: 1 problem found in this')[1]
            assert 'reused_model' in report and 'fix: build a new model per run' in report, out
            assert out.index('the end of the file') < out.index('fastai-paranoid: 1 problem found'), out
            if how == 'ipy': # the file's lines (the fit, the Learner's construction, in `fit`), not <ipython-input-1-...>
                assert 'leaky.ipy:8 ' in report and 'Learner built at leaky.ipy:7' in report, out
        else: assert 'fastai-paranoid' not in out and 'StateLeakWarning' not in err, out + err
