"""The kinds of input file hieropt reads, told apart by their distinctive top-level keys (TOML,
YAML) or their first line (ASTRA-sim workload text, a runs CSV), so that a file of the wrong kind
given to a command is named for what it is, with the command or flag it belongs to, instead of
failing on its first key as an unknown one.

:func:`file_kind` recognises a file's kind (:data:`KINDS`) from its text; :func:`check_kind` is
called by every reader (through :func:`hieropt.io.common.read_toml`, ``read_yaml_mapping`` and the
workload and runs readers) with the kind it expects (:data:`EXPECTED`) and raises
:class:`WrongKindError`: ``FILE is a co-design space, not an instance; fix: run `hieropt codesign
FILE```. A file whose kind is not recognised (or is the expected one, typos and all) is left to the
reader, whose message names the field.

A workload model file given where an instance or a space is read keeps its own message, which says
where such a file goes in the file being read (:func:`check_not_model_file`).

Imports neither pydantic nor numpy nor PyYAML (a YAML file's top-level keys are read by pattern).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..names import POLICIES

__all__ = [
    "EXPECTED",
    "HINTS",
    "KINDS",
    "YAML_KINDS",
    "NOT_MODEL_FILES",
    "WrongKindError",
    "check_kind",
    "check_not_model_file",
    "file_kind",
    "toml_kind",
]

KINDS: dict[str, tuple[str, str]] = {
    "instance": ("an instance", "run `hieropt solve {file}` (or evaluate, compare, pareto; from "
                 "Python: hieropt.solve)"),
    "co-design space": ("a co-design space", "run `hieropt codesign {file}` (from Python: "
                         "hieropt.codesign)"),
    "shape space": ("a shape space (explore)", "run `hieropt explore {file}` (from Python: "
                    "hieropt.explore)"),
    "parts catalog": ("a parts catalog", "give it to provision: `hieropt provision INSTANCE "
                      "--catalog {file}` (from Python: hieropt.provision(instance, catalog))"),
    "accelerator catalog": ("an accelerator catalog", "name it in an LLM model file "
                            '(npu_catalog = "PATH": its path from the model file\'s folder; '
                            "from here it is {file})"),
    "calibrated accelerator": ("a calibrated accelerator file (written by hieropt calibrate)",
                               "name it in an LLM model file ([params.npu] calibrated = "
                               '"PATH": its path from the model file\'s folder; from here it is '
                               "{file}), or give it to validate: "
                               "`hieropt validate RUNS.csv --npu {file}`"),
    "llm model": ("an LLM model file", "run `hieropt workload plan {file}`, or name it as a "
                  "co-design space's model or an instance's workload"),
    "workload model": ("a workload model file", "run `hieropt workload show {file}`, or name it "
                       "as an instance's workload"),
    "network": ("a network file (a runs file's network)", "name it in a runs file's network "
                "column (`hieropt validate RUNS.csv`)"),
    "libra network": ("a LIBRA network YAML", "give it to solve with the LIBRA flags: `hieropt "
                      "solve --network {file} --workload W.txt --cost C.yml`"),
    "libra communicator": ("a LIBRA communicator YAML", "give it to solve with the LIBRA flags: "
                           "`hieropt solve --network N.yml --workload W.txt --cost C.yml "
                           "--communicator {file}`"),
    "libra cost model": ("a LIBRA cost model YAML", "give it to solve with the LIBRA flags: "
                         "`hieropt solve --network N.yml --workload W.txt --cost {file}`"),
    "astrasim network": ("an ASTRA-sim 2.0 network YAML", "give the network as a LIBRA network "
                         "YAML (Topology, NpusCount, CostDimension) or an instance's [network] "
                         "(hieropt writes ASTRA-sim 2.0 YAML with `hieropt export`)"),
    "workload text": ("an ASTRA-sim workload text file", "run `hieropt workload show {file}`, or "
                      "give it to solve with the LIBRA flags: `hieropt solve --workload {file} "
                      "--network N.yml --cost C.yml`"),
    "runs": ("a runs CSV", "run `hieropt validate {file}` (or `hieropt calibrate {file}`; "
             "from Python: hieropt.validate, hieropt.calibrate)"),
    "search rows": ("a search's results file (one row per candidate: codesign or explore "
                    "--out)", "rerun the search's command with --json FILE (the rows in {file} "
                    "are resumed, not solved again) and give a co-design JSON to `hieropt "
                    "report FILE.json`"),
    "codesign result": ("a co-design result (the JSON `hieropt codesign --json` writes)",
                        "give it to the committee page: `hieropt report {file}`"),
    "json answer": ("an answer hieropt wrote (--json)", "give the command the input it was "
                    "made from (an instance, a space, a model or a runs file)"),
}
"""Every kind of input file: its name with its article (for ``FILE is ...``) and the fix (the
command or flag it belongs to; ``{file}``: the file as given)."""

EXPECTED: dict[str, tuple[str, frozenset[str]]] = {
    "instance": ("an instance", frozenset({"instance"})),
    "co-design space": ("a co-design space", frozenset({"co-design space"})),
    "shape space": ("a shape space", frozenset({"shape space"})),
    "instance or co-design space": ("an instance or a co-design space",
                                    frozenset({"instance", "co-design space"})),
    "parts catalog": ("a parts catalog", frozenset({"parts catalog"})),
    "accelerator catalog": ("an accelerator catalog", frozenset({"accelerator catalog"})),
    "calibrated accelerator": ("a calibrated accelerator file (--npu)",
                               frozenset({"calibrated accelerator"})),
    "calibrated npu": ("a calibrated accelerator file (params.npu.calibrated)",
                       frozenset({"calibrated accelerator"})),
    "workload model": ("a workload model file", frozenset({"llm model", "workload model"})),
    "model": ("an LLM model file", frozenset({"llm model", "workload model"})),
    "runs model": ("an LLM model file", frozenset({"llm model", "workload model", "instance"})),
    "network": ("a network file (a LIBRA network YAML, a network TOML or an instance)",
                frozenset({"network", "instance", "libra network"})),
    "LIBRA network": ("a LIBRA network YAML", frozenset({"libra network"})),
    "communicator": ("a LIBRA communicator YAML", frozenset({"libra communicator"})),
    "cost model": ("a LIBRA cost model YAML", frozenset({"libra cost model"})),
    "ASTRA-sim network": ("an ASTRA-sim 2.0 network YAML", frozenset({"astrasim network"})),
    "workload": ("an ASTRA-sim workload text file", frozenset({"workload text"})),
    "runs": ("a runs CSV", frozenset({"runs"})),
}
"""The file kind a reader expects (the ``what`` it passes to :func:`hieropt.io.common.read_text`):
its name with its article, and the :data:`KINDS` it accepts. A ``what`` not listed checks
nothing."""

YAML_KINDS = frozenset({"libra network", "libra communicator", "libra cost model",
                        "astrasim network"})
"""The kinds written in YAML (a YAML syntax error in one of them is reported as such)."""

HINTS = {
    "calibrated npu": "a model file's [params.npu] calibrated names a file written by hieropt "
    "calibrate RUNS.csv --out FILE",
    "runs": "a runs file names its model and network files in each row's model and network "
    "cells",
}
"""What a reader of ``what`` adds to the fix of a file of another kind: where such files go in
the file it expected."""

NOT_MODEL_FILES = {
    "instance": "name it as an instance's workload (workload = \"PATH/{name}\", relative to the "
    "instance file, or the workload of a [[workloads]] entry)",
    "shape space": "name it as the space's workload (workload = \"PATH/{name}\", relative to the "
    "space file, or the workload of a [[workloads]] entry)",
    "co-design space": "name it as the space's model (model = \"PATH/{name}\", relative to the "
    "space file)",
}
"""The file kinds a workload model file gets its own message for, each with where the model file
goes instead (``{name}``: its file name)."""

_NETWORK_KEYS = frozenset({"description", "name", "network", "chunks", "collectives_in_flight",
                           "dimension_mode", "group_bandwidth"})
_INSTANCE_KEYS = frozenset({"workload", "workloads", "objective", "training_loop", "cost",
                            "cluster", "mapping"})
_COST_PARTS = frozenset({"Link", "Switch", "Nic", "NIC"})
_YAML_TOP = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:", re.M)
_YAML_NESTED = re.compile(r"^[ \t]+([A-Za-z_][\w-]*)[ \t]*:", re.M)
_COLLECTIVES = frozenset({"NONE", "ALLREDUCE", "ALLGATHER", "REDUCESCATTER", "ALLTOALL"})


class WrongKindError(InputError):
    """A file of another kind than the command reads (exit 2), written as one line ``FILE is a
    co-design space, not an instance; fix: run `hieropt codesign FILE` (from Python:
    hieropt.codesign)``: ``problem`` is the part after the file's name; the fix names the command
    and the library function that read it."""

    def one_line(self) -> str:
        """``SOURCE PROBLEM; fix: FIX`` (the problem reads on from the file's name)."""
        return f"{self.source} {self.problem}; fix: {self.fix}"


def toml_kind(data: dict[str, Any]) -> str | None:
    """The kind (a key of :data:`KINDS`) of a parsed TOML file by its distinctive top-level keys,
    or None when it is none of them clearly (a file of the expected kind with a misspelled key is
    left to its reader)."""
    keys = set(data)
    generator = data.get("generator")
    if isinstance(generator, str) and isinstance(data.get("params"), dict):
        return "llm model" if generator == "llm" else "workload model"
    params = data.get("params")
    if isinstance(params, dict) and isinstance(params.get("npu"), dict) and isinstance(
            data.get("calibration"), dict):
        return "calibrated accelerator"
    if isinstance(data.get("classes"), dict) and "network" not in keys:
        return "parts catalog"
    if isinstance(data.get("accelerator"), list):
        return "accelerator catalog"
    if isinstance(data.get("model"), str) and ("npus" in keys or "plans" in keys):
        return "co-design space"
    if {"npus", "dims"} <= keys and keys & {"workload", "workloads"} and "network" not in keys:
        return "shape space"
    if "network" in keys and keys & _INSTANCE_KEYS and "model" not in keys:
        return "instance"
    if isinstance(data.get("network"), dict) and keys <= _NETWORK_KEYS:
        return "network"
    return None


def _first_line(text: str) -> str:
    """The first line of ``text`` that is neither blank nor a ``#`` comment ('' if none)."""
    return next((t.strip() for t in text.splitlines() if t.strip()
                 and not t.lstrip().startswith("#")), "")


def _is_workload_text(line: str) -> bool:
    """Whether ``line`` opens an ASTRA-sim workload: a header policy, or (LIBRA's header-less
    file) a layer line: a name, the dependency -1, and a compute time and collective per phase."""
    fields = line.split()
    if fields and fields[0] in POLICIES:
        return True
    return len(fields) >= 12 and fields[1] == "-1" and fields[3] in _COLLECTIVES


def _yaml_kind(text: str) -> str | None:
    """The kind of a YAML file by its top-level (and, for a cost model, nested) keys, read by
    pattern, or None."""
    top = set(_YAML_TOP.findall(text))
    if {"Topology", "NpusCount"} <= top:
        return "libra network"
    if {"topology", "npus_count"} <= top:
        return "astrasim network"
    if top and top <= {"Forward", "InputGrad", "WeightGrad"}:
        return "libra communicator"
    nested = set(_YAML_NESTED.findall(text))
    if top and nested and nested <= _COST_PARTS and not any(
            re.search(rf"^{re.escape(k)}[ \t]*:[ \t]*[^\s#]", text, re.M) for k in top):
        return "libra cost model"
    return None


def _json_kind(text: str) -> str | None:
    """``"codesign result"`` or ``"json answer"`` for a JSON object (hieropt's ``--json``
    outputs), else None."""
    body = text.removeprefix("\ufeff").lstrip()
    if not body.startswith("{"):
        return None
    import json

    try:
        data = json.loads(body)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    return "codesign result" if {"best", "ranking"} <= set(data) else "json answer"


def file_kind(text: str, data: dict[str, Any] | None = None) -> str | None:
    """The kind (a key of :data:`KINDS`) of a file whose text is ``text`` (``data``: its parsed
    TOML table or YAML mapping, when the reader has it), or None when it is not recognised.

    TOML kinds by their top-level keys (:func:`toml_kind`); an ASTRA-sim workload by its first line
    (a header policy, or a layer line of LIBRA's header-less text); a runs CSV by its header row
    (``model`` and ``network`` columns); a search's results file by its ``space_hash`` column;
    LIBRA and ASTRA-sim 2.0 YAML by their top-level keys."""
    if data is None:
        try:
            data = tomllib.loads(text.removeprefix("\ufeff"))
        except (tomllib.TOMLDecodeError, ValueError):
            data = None
    kind = toml_kind(data) if data else None
    if kind is not None:
        return kind
    if (json_kind := _json_kind(text)) is not None:
        return json_kind
    first = _first_line(text)
    if _is_workload_text(first):
        return "workload text"
    if "," in first and {"model", "network"} <= {c.strip().strip('"') for c in first.split(",")}:
        return "runs"
    if "," in first and "space_hash" in {c.strip().strip('"') for c in first.split(",")}:
        return "search rows"
    return _yaml_kind(text)


def check_kind(path: str | Path, what: str, text: str, data: dict[str, Any] | None = None) -> None:
    """Refuse a file of another kind than ``what`` (a key of :data:`EXPECTED`, the kind the reader
    expects; any other ``what`` checks nothing): ``text`` is its text, ``data`` its parsed TOML
    table if the reader has it. A workload model file where an instance or a space is read gets
    :func:`check_not_model_file`'s message.

    Raises:
        WrongKindError: ``FILE is KIND, not EXPECTED; fix: ...`` with the command or flag the file
            belongs to (:data:`KINDS`).
        InputError: a workload model file given as an instance or a space.
    """
    if what not in EXPECTED:
        return
    # (compare and report read either: a model file is told where it goes in an instance)
    as_model = "instance" if what == "instance or co-design space" else what
    if data is not None and as_model in NOT_MODEL_FILES:
        check_not_model_file(data, path, f"{'an' if as_model == 'instance' else 'a'} {as_model}",
                             NOT_MODEL_FILES[as_model])
    kind = file_kind(text, data)
    expected, accepted = EXPECTED[what]
    if kind is None or kind in accepted:
        return
    label, fix = KINDS[kind]
    hint = HINTS.get(what)
    raise WrongKindError(path, None, f"is {label}, not {expected}",
                         fix.format(file=path) + (f"; {hint}" if hint else ""))


def check_not_model_file(data: dict[str, Any], src: str | Path, what: str, fix: str) -> None:
    """Refuse a workload model file (a top-level ``generator`` beside ``[params]``:
    ``models/gpt3-175b-llm.toml``) given where ``what`` (``an instance``, ``a co-design space``,
    ...) is read, which would otherwise fail on its first key as an unknown one.

    ``fix``: how to name it in a ``what`` file (``{name}`` is replaced by the file's name); for an
    LLM model file (``generator = "llm"``) it goes on with ``, or use hieropt workload plan FILE``
    (size its plan), for another ``, or use hieropt workload show FILE``.

    Raises:
        InputError: naming ``src``, ``generator`` and the fix.
    """
    generator = data.get("generator")
    if not isinstance(generator, str) or not isinstance(data.get("params"), dict):
        return
    kind = "an LLM" if generator == "llm" else f"a {generator}"
    command = "plan" if generator == "llm" else "show"
    raise InputError(
        src,
        "generator",
        f'{kind} model file (generator = "{generator}"), not {what}',
        f"{fix.format(name=Path(src).name)}, or use hieropt workload {command} {src}",
    )
