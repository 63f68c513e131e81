"""Write README.md from nbs/index.ipynb (Quarto, which `nbdev-readme` needs, cannot be installed here).

Markdown cells are copied, code cells become ```python blocks, and their text outputs (streams and plain
results, as saved by `nbdev-test --save`) follow as plain ``` blocks. Run from the repository root:
`python tools/readme.py` (writes README.md) or `python tools/readme.py --check` (exits 1 if README.md is stale).
"""
import json, sys
from pathlib import Path

def _text(x): return ''.join(x) if isinstance(x, list) else x

def render(nb_path='nbs/index.ipynb'):
    nb = json.loads(Path(nb_path).read_text())
    parts = []
    for cell in nb['cells']:
        src = _text(cell['source']).strip()
        if cell['cell_type'] == 'markdown':
            parts.append(src)
        elif cell['cell_type'] == 'code' and src and not src.startswith('#|hide'):
            parts.append(f"```python\n{src}\n```")
            outs = []
            for o in cell.get('outputs', []):
                if o.get('output_type') == 'stream' and o.get('name') == 'stdout': outs.append(_text(o['text']))
                elif 'text/plain' in o.get('data', {}): outs.append(_text(o['data']['text/plain']) + '\n')
            if outs: parts.append("```\n" + ''.join(outs).rstrip('\n') + "\n```")
    return "<!-- Written by tools/readme.py from nbs/index.ipynb: edit the notebook, not this file. -->\n\n" + '\n\n'.join(parts) + '\n'

if __name__ == '__main__':
    text = render()
    if '--check' in sys.argv:
        stale = Path('README.md').read_text() != text
        if stale: print("README.md is stale: run `python tools/readme.py` after editing nbs/index.ipynb")
        sys.exit(int(stale))
    Path('README.md').write_text(text)
