"""_command.py - repack and restore: the relayout command built into this
package (or, where the environment names one, RELAYOUT_COMMAND), run on
safetensors files; its summary parsed, its errors raised."""
import json
import os
import subprocess
from pathlib import Path
from typing import Dict, Optional, Sequence, Union

PathLike = Union[str, "os.PathLike[str]"]


def _command() -> str:
    return os.environ.get("RELAYOUT_COMMAND") or \
        str(Path(__file__).with_name("bin") / "relayout")


def _run(args: Sequence[str], device: str, error: type) -> Dict:
    env = dict(os.environ, RELAYOUT_DEVICE=device)
    try:
        r = subprocess.run([_command(), "repack", *args, "--json"], env=env,
                           capture_output=True, text=True)
    except OSError as e:
        raise error("RELAYOUT_ERR_UNSUPPORTED",
                    f"the relayout command ({_command()}): {e}") from None
    if r.returncode:
        # exit 2: the arguments (a rule, a layout) were wrong; 1: the work
        status = "EXIT_USAGE" if r.returncode == 2 else "EXIT_WORK"
        raise error(status, r.stderr.strip())
    return json.loads(r.stdout)


def repack(src: PathLike, dst: PathLike, rules: Sequence[str],
           device: str = "auto", max_memory: Optional[str] = None,
           wait_compile: bool = False, error: type = RuntimeError) -> Dict:
    args = [os.fspath(src), os.fspath(dst)]
    for rule in rules:
        args += ["--rule", rule]
    if max_memory:
        args += ["--max-memory", max_memory]
    if wait_compile:
        args.append("--wait-compile")
    return _run(args, device, error)


def restore(src: PathLike, dst: PathLike, device: str = "auto",
            error: type = RuntimeError) -> Dict:
    return _run(["--restore", os.fspath(src), os.fspath(dst)], device, error)
