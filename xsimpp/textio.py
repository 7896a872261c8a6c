"""Strict text reading and atomic writing shared by every layer that touches files."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import math
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, Iterator, Sequence

import numpy as np

from .errors import BadInputError, MissingResourceError


_CAUSES = {
    errno.EROFS: "the file system is read-only",
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
    errno.EISDIR: "it is a directory",
    errno.ENOTDIR: "a part of the path is not a directory",
    errno.EEXIST: "it already exists",
    errno.ENOENT: "no such file or directory",
    errno.ENAMETOOLONG: "the name is too long",
    errno.EIO: "an input/output error",
}


def os_error_cause(e: OSError) -> str:
    """A short reason for an OS error: 'the disk is full', 'permission denied', ..."""
    return _CAUSES.get(e.errno or 0, (e.strerror or str(e)).lower())


def describe_os_error(e: OSError, action: str | None = None) -> str:
    """One sentence for an OS error, naming the path and the cause (no errno numbers, no traceback)."""
    path = e.filename if e.filename is not None else None
    what = f"cannot {action or 'access'}" + (f" {path}" if path is not None else "")
    return f"{what}: {os_error_cause(e)}"


def os_failure(e: OSError, action: str, path: str | os.PathLike | None = None) -> BadInputError:
    """The BadInputError to raise for an OS error met while doing ``action`` on ``path``."""
    if path is not None and e.filename is None:
        e.filename = str(path)
    return BadInputError(describe_os_error(e, action))


def _nearest_existing(path: Path) -> Path:
    p = path
    while not os.path.lexists(p) and p != p.parent:
        p = p.parent
    return p


def _check_parent(path: Path, flag: str) -> None:
    """The folder a new ``path`` goes into exists as a writable directory or can be created."""
    anc = _nearest_existing(path.parent)
    if not anc.is_dir():
        raise BadInputError(f"{flag} {path}: {anc} is not a directory")
    if not os.access(anc, os.W_OK | os.X_OK):
        raise BadInputError(f"{flag} {path}: cannot write in {anc} (permission denied or read-only)")


def check_output_file(path: str | os.PathLike | None, flag: str) -> Path | None:
    """Validate an output file before any work: not a directory, its folder writable.

    ``flag`` names the option in the message (``--dump``). Missing parent folders are created at
    write time, as long as the nearest existing ancestor is a writable directory. Returns the path.
    """
    if path is None:
        return None
    if str(path) == "-":  # no command writes to standard output: '-' would be a file of that name
        raise BadInputError(f"{flag} -: xsimpp writes files, not standard output; give a file name "
                            "(./- for a file named '-')")
    p = Path(path).expanduser()
    _check_length(p, flag)
    if str(path).endswith(("/", os.sep)) or p.is_dir():
        raise BadInputError(f"{flag} {p} is a directory; give a file name")
    if os.path.lexists(p):
        try:
            mode = os.stat(p).st_mode
        except OSError as e:
            raise os_failure(e, "use", p) from None
        if not stat.S_ISREG(mode):
            raise BadInputError(f"{flag} {p} exists and is not a regular file")
        if not os.access(p, os.W_OK):
            raise BadInputError(f"{flag} {p}: cannot replace it (permission denied or read-only)")
    _check_parent(p, flag)
    return p


# Room an atomic write needs beside a name (".NAME.tmp-PID-XXXXXXXX", ".NAME.PID.XXXXXXXX.tmp") and
# below an output folder (the files a command writes in it).
_TEMP_ROOM, _INSIDE_ROOM = 32, 200


def _check_length(p: Path, flag: str) -> None:
    """A name the file system can take with the temporary beside it, checked before any work (a
    --out one character too long failed only when a finished training or study came to be written)."""
    probe = p
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        name_max, path_max = os.pathconf(probe, "PC_NAME_MAX"), os.pathconf(probe, "PC_PATH_MAX")
    except (OSError, ValueError, AttributeError):  # no pathconf (Windows) or the name is unknown there
        name_max, path_max = 255, 4096
    for part in p.parts:
        if len(os.fsencode(part)) > name_max - _TEMP_ROOM:
            raise BadInputError(f"{flag}: the name {part[:40]!r}... is {len(os.fsencode(part))} bytes; this file system "
                                f"takes {name_max}, and a safe write needs {_TEMP_ROOM} of them for its temporary name")
    if len(os.fsencode(str(p.absolute()))) > path_max - _INSIDE_ROOM:
        raise BadInputError(f"{flag}: the path is {len(os.fsencode(str(p.absolute())))} bytes long; this file system "
                            f"takes {path_max}, with room needed for the files written inside it")


def check_output_dir(path: str | os.PathLike | None, flag: str) -> Path | None:
    """Validate an output folder before any work: a writable directory, or creatable as one."""
    if path is None:
        return None
    p = Path(path).expanduser()
    _check_length(p, flag)
    if os.path.lexists(p):
        if not p.is_dir():
            raise BadInputError(f"{flag} {p} exists and is not a directory")
        if not os.access(p, os.W_OK | os.X_OK):
            raise BadInputError(f"{flag} {p}: cannot write in it (permission denied or read-only)")
        return p
    _check_parent(p, flag)
    return p


def _resolved(p: str | os.PathLike) -> Path:
    return Path(os.path.realpath(Path(p).expanduser()))


def _same(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """One file or folder under two names: the same resolved path (symlinks) or the same inode (hard links)."""
    if _resolved(a) == _resolved(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist yet
        return False


def _within(inner: str | os.PathLike, folder: str | os.PathLike) -> bool:
    f = _resolved(folder)
    return f in _resolved(inner).parents


def _named(paths: dict[str, Any] | None) -> list[tuple[str, Any]]:
    """(label, path) pairs from label -> path, a list of paths, or None; what is not a path (the
    API's in-memory arrays in place of files) is left out."""
    out = []
    for label, value in (paths or {}).items():
        for v in (value if isinstance(value, (list, tuple)) else [value]):
            if isinstance(v, (str, os.PathLike)) and str(v) != "":
                out.append((label, v))
    return out


def check_paths_apart(*, inputs: dict[str, Any] | None = None, files: dict[str, Any] | None = None,
                      folders: dict[str, Any] | None = None, replaced: dict[str, Any] | None = None,
                      stores: dict[str, Any] | None = None) -> None:
    """Refuse, before any work, an output that would overwrite what the run reads or writes
    elsewhere. Each argument maps a label (the flag, ``--dump``; or 'the results store') to a path
    or a list of paths: ``inputs`` the files and folders the run reads, ``files`` the files it
    writes, ``folders`` the folders it writes files into, ``replaced`` the folders it replaces as a
    whole (atomic_dir), ``stores`` the toolkit's own folders (results store, embedding cache).
    Refused: an output file that is an input (the same resolved path or inode: symlinks and hard
    links included); two outputs that are one path; an output inside an output folder or a store
    (a dump named like a record, a TSV named like an index array); a replaced folder that holds an
    input or a store. One sentence naming both flags."""
    ins, out_files = _named(inputs), _named(files)
    holders = _named(folders) + _named(replaced)
    whole = _named(replaced)
    kept = _named(stores)
    for flag, out in out_files:
        for iflag, inp in ins:
            if _same(out, inp):
                raise BadInputError(f"{flag} {out} is the same file as {iflag} {inp}: the run would replace what it "
                                    f"reads; give {flag} another path")
    outputs = out_files + holders
    for i, (flag, out) in enumerate(outputs):
        for oflag, other in outputs[i + 1:]:
            if _same(out, other):
                raise BadInputError(f"{flag} {out} and {oflag} {other} are the same path: one output would replace "
                                    "the other; give each its own")
        for hflag, holder in holders + kept:
            same = (hflag, holder) in kept and _same(out, holder)
            if same or _within(out, holder):
                whose = "only xsimpp writes" if (hflag, holder) in kept else "this run also writes"
                raise BadInputError(f"{flag} {out} is {'' if same else 'inside '}{hflag} {holder}, which {whose}; "
                                    f"give {flag} a path outside it")
    for flag, folder in whole:
        for xflag, x in ins + kept:
            if _same(x, folder) or _within(x, folder):
                raise BadInputError(f"{flag} {folder} holds {xflag} {x}, and the run replaces that folder as a "
                                    f"whole; give another {flag}")


def make_dirs(path: str | os.PathLike, flag: str | None = None) -> Path:
    """mkdir -p with a one-sentence error (a file in the way, read-only, permission)."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise BadInputError(f"{(flag + ' ') if flag else ''}{p} exists and is not a directory") from None
    except OSError as e:
        raise os_failure(e, "create the folder", p) from None
    return p


def check_input_file(path: str | os.PathLike, what: str = "File") -> Path:
    """An input path that exists, is a regular file and is readable; else one clear sentence."""
    p = Path(path)
    if p.is_dir():
        raise BadInputError(f"{what} {p} is a directory, not a file")
    if not p.exists():
        raise MissingResourceError(f"{what} not found: {p}")
    if not p.is_file():
        raise BadInputError(f"{what} {p} is not a regular file (a pipe or device?); give a file")
    return p


def read_bytes(path: str | os.PathLike) -> bytes:
    """A file's bytes; OS errors (permission, I/O) become one sentence."""
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise os_failure(e, "read", path) from None


def read_lines(path: str | os.PathLike, *, allow_empty_lines: bool = False) -> list[str]:
    """Read a one-sentence-per-line UTF-8 file, rejecting what would silently skew scores.

    Trailing newline characters are removed (a final line without newline equals the same line
    with one, unlike LASER's readlines comparison). Broken UTF-8 and empty lines are errors that
    name the file and line.
    """
    p = check_input_file(path)
    raw = read_bytes(p)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line_no = raw[: e.start].count(b"\n") + 1
        raise BadInputError(f"{p}: line {line_no} is not valid UTF-8 ({e.reason} at byte {e.start})") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text:
        raise BadInputError(f"{p} is empty")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    if not allow_empty_lines:
        empty = [i + 1 for i, ln in enumerate(lines) if not ln.strip()]
        if empty:
            shown = ", ".join(map(str, empty[:5])) + (" …" if len(empty) > 5 else "")
            raise BadInputError(f"{p} has {len(empty)} empty line(s) (line {shown}); every line must hold a sentence")
    return lines


def _write_temp(path: Path, data: bytes) -> str:
    """``data`` in a fsynced temporary file beside ``path``; returns its name (OS errors raise)."""
    make_dirs(path.parent)
    if path.is_dir():
        raise BadInputError(f"cannot write {path}: it is a directory")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise os_failure(e, "write", path) from None
    try:
        # mkstemp creates 0600; give the file the mode a plain open() would (0666 minus umask).
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException as e:
        _unlink_quietly(tmp)
        if isinstance(e, OSError):
            raise os_failure(e, "write", path) from None
        raise
    return tmp


def _unlink_quietly(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except OSError:
        pass


def _atomic_write_bytes(path: Path, data: bytes) -> None:
    sweep_stale(path)
    tmp = _write_temp(path, data)
    try:
        os.replace(tmp, path)
    except OSError as e:
        _unlink_quietly(tmp)
        raise os_failure(e, "write", path) from None


def atomic_write_many(files: Sequence[tuple[str | os.PathLike, bytes]]) -> None:
    """Write several files all or nothing: every file goes to a fsynced temporary first (where a
    full disk or a read-only folder shows), and only when all are written are they renamed into
    place. A failure before the renames leaves every old file as it was and no temporary behind."""
    sweep_stale(*(Path(p) for p, _ in files))  # each folder listed once, not once a file
    done: list[tuple[str, Path]] = []
    try:
        for path, data in files:
            done.append((_write_temp(Path(path), data), Path(path)))
    except BaseException:
        for tmp, _ in done:
            _unlink_quietly(tmp)
        raise
    for i, (tmp, path) in enumerate(done):
        try:
            os.replace(tmp, path)
        except OSError as e:  # renames within one folder do not need space; this is rare
            for t, _ in done[i:]:
                _unlink_quietly(t)
            raise os_failure(e, "write", path) from None


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write text so that readers see either the old file or the whole new one, never a part."""
    _atomic_write_bytes(Path(path), text.encode("utf-8"))


def path(text: str) -> str:
    """A path given on the command line (argparse ``type``): an empty one is refused, never read as
    "the default folder" (``--results-dir ''`` used to store where nobody asked)."""
    if not str(text).strip():
        raise BadInputError("an empty path")
    return text


def finite(text: str) -> float:
    """A number given on the command line (argparse ``type``): NaN and infinities are refused, so a
    learning rate of 'nan' never trains a model whose weights are NaN."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"not a finite number: {text}")
    return value


MAX_SEED = 2**63 - 1  # what numpy, torch and Python's random all take


def seed(text: str) -> int:
    """A seed given on the command line (argparse ``type``): an integer from 0 to 2**63 - 1."""
    value = int(text)
    if not 0 <= value <= MAX_SEED:
        raise ValueError(f"a seed is an integer from 0 to {MAX_SEED}, not {text}")
    return value


@contextlib.contextmanager
def locked(lock_file: str | os.PathLike) -> Iterator[None]:
    """An exclusive lock for a read-modify-write of shared files (two processes exporting to one
    result file would otherwise both read the old file and one would lose the other's part). POSIX
    advisory locking (``fcntl.flock``); where it does not exist (Windows) the writes stay atomic
    but unsynchronised."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    path = Path(lock_file)
    try:
        handle = open(path, "a+")
    except OSError as e:
        raise os_failure(e, "lock", path) from None
    with handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


@contextlib.contextmanager
def claimed(out: str | os.PathLike, flag: str) -> Iterator[None]:
    """Hold an exclusive claim of the output folder ``out`` for a whole run, so two runs naming one
    --out cannot both pass the check that it is free and both report success (one output lost).
    The claim is an ``fcntl.flock`` on ``.NAME.claim`` beside ``out``, taken without waiting: a second
    run is refused in one sentence at its start. The kernel drops the lock of a killed run, so a
    claim file left behind never blocks the next run (unlike an O_EXCL file, which a SIGKILL leaves
    taken). The file is removed when the run ends; a run that opened it just before is told by its
    inode and tries again. Where flock does not exist (Windows) the claim is not exclusive."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    target = Path(out).expanduser()
    make_dirs(target.parent, flag)
    claim = target.parent / f".{target.name}.claim"
    while True:
        try:
            fd = os.open(claim, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as e:
            raise os_failure(e, "claim", target) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise BadInputError(f"{flag} {target} is being written by another run (it holds {claim}); wait for it "
                                f"to finish, or give another {flag}") from None
        try:
            current = os.stat(claim)
        except FileNotFoundError:
            current = None
        mine = os.fstat(fd)
        if current is not None and (current.st_dev, current.st_ino) == (mine.st_dev, mine.st_ino):
            break
        os.close(fd)  # the holder before removed this file between our open and our lock
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        yield
    finally:
        _unlink_quietly(str(claim))  # still locked: a run that opened it sees the inode gone and retries
        os.close(fd)


def path_inside(root: str | os.PathLike, *parts: str, what: str) -> Path:
    """``root/parts...`` when it stays inside ``root``: the one check wherever a name (an encoder's
    id or revision, a model name) becomes part of a path, so a name such as '../x' can never choose
    where xsimpp writes. Refused in one sentence naming ``what``."""
    base = Path(root).expanduser()
    joined = base.joinpath(*parts)
    inside = os.path.normpath(os.path.abspath(joined))
    top = os.path.normpath(os.path.abspath(base))
    # a '..' anywhere is refused even when it lands inside root (it would land in another name's place)
    climbs = any(c == ".." for p in parts for c in Path(p).parts)
    if climbs or os.path.commonpath([inside, top]) != top or inside == top:
        raise BadInputError(f"{what} would be written at {joined}, outside {base}: a name in it ({'/'.join(parts)!r}) "
                            "is not a plain name")
    return joined


def parse_json(data: bytes | str, where: str | os.PathLike) -> Any:
    """JSON from a file's bytes (or text), bounded: broken UTF-8, invalid JSON, nesting deeper than
    the interpreter's recursion limit and integers past its digit limit (4300) each end in one
    sentence naming ``where``, never a traceback."""
    try:
        return json.loads(data.decode("utf-8") if isinstance(data, bytes) else data)
    except UnicodeDecodeError as e:
        raise BadInputError(f"{where} is not valid UTF-8 JSON ({e})") from None
    except RecursionError:
        raise BadInputError(f"{where} nests its JSON deeper than can be read; it is not a file xsimpp wrote") from None
    except ValueError as e:  # JSONDecodeError, and an integer of more digits than Python converts
        raise BadInputError(f"{where} is not valid UTF-8 JSON: {str(e)[:200]}") from None


def json_text(obj: Any) -> str:
    """The project's JSON file layout (sorted keys, one-space indent, UTF-8 as is)."""
    return json.dumps(obj, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def atomic_write_json(path: str | os.PathLike, obj: Any) -> None:
    atomic_write_text(path, json_text(obj))


def atomic_save_npy(path: str | os.PathLike, array: np.ndarray) -> None:
    import io

    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=False)
    _atomic_write_bytes(Path(path), buf.getvalue())


def write_rows(path: str | os.PathLike, rows: Sequence[dict], fields: Sequence[str]) -> str:
    """Write rows as JSONL (``.jsonl``/``.json``/``.ndjson``) or TSV (anything else), atomically.
    Returns the format written."""
    import csv
    import io

    p = Path(path)
    if p.suffix.lower() in (".jsonl", ".json", ".ndjson"):
        atomic_write_text(p, "".join(json.dumps({f: r[f] for f in fields}, ensure_ascii=False) + "\n" for r in rows))
        return "jsonl"
    buf = io.StringIO()
    # csv quoting keeps a sentence that holds a tab, a quote or a bare CR in one field (pandas reads
    # it back as one row). QUOTE_ALL on the rows that hold a CR: with "\n" line ends the csv module
    # leaves a CR unquoted, and a CR ends a row for pandas and most TSV readers.
    plain = csv.writer(buf, delimiter="\t", lineterminator="\n")
    quoted = csv.writer(buf, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_ALL)
    plain.writerow(fields)
    for n, r in enumerate(rows, 1):
        values = [r[f] for f in fields]
        text = [v for v in values if isinstance(v, str)]
        if any("\0" in v for v in text):
            raise BadInputError(f"{p}: row {n} holds a NUL character, which a TSV cannot carry; write it as .jsonl")
        (quoted if any("\r" in v for v in text) else plain).writerow(values)
    atomic_write_text(p, buf.getvalue())
    return "tsv"


def file_sha256(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    """sha256 of a file's bytes, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def _ordinary_modes(folder: Path) -> None:
    """The modes a plain mkdir / open would give (mkdtemp makes the folder 0700, and some writers,
    such as transformers' save_pretrained, write 0600 files)."""
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(folder, 0o777 & ~mask)
    for f in folder.iterdir():
        if f.is_file():
            os.chmod(f, 0o666 & ~mask)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists (another user's): not ours to judge
        return True
    return True


def sweep_stale(*paths: Path) -> list[Path]:
    """Remove the temporaries a killed writer of ``paths`` left beside them: ``.NAME.tmp-PID-*``
    folders, ``.NAME.old-PID`` folders and ``.NAME.PID.*.tmp`` files whose process PID is gone.
    Only names of that form are touched, and only when their process no longer exists (a live
    writer's temporaries, or any file without such a name, stay). Each folder is listed once
    however many of its files are written. Returns what was removed."""
    import re
    import shutil

    names_by_folder: dict[Path, set[str]] = {}
    for p in paths:
        names_by_folder.setdefault(p.parent, set()).add(p.name)
    removed = []
    for folder, names in names_by_folder.items():
        alternatives = "|".join(re.escape(n) for n in sorted(names))
        pattern = re.compile(rf"\.(?:{alternatives})\.(?:tmp-(\d+)-.+|old-(\d+)|(\d+)\..+\.tmp)")
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            m = pattern.fullmatch(entry.name)
            if not m:
                continue
            pid = int(next(g for g in m.groups() if g))
            if pid == os.getpid() or _alive(pid):
                continue
            try:
                if entry.is_dir() and not entry.is_symlink():
                    shutil.rmtree(entry)
                else:
                    entry.unlink()
                removed.append(entry)
            except OSError:
                continue
    if removed:
        import logging

        logging.getLogger(__name__).warning("removed %d temporary file(s) left beside %s by a killed run", len(removed),
                                            ", ".join(sorted({str(p) for p in paths})[:3]))
    return removed


class atomic_dir:
    """``with atomic_dir(out) as tmp:`` write the folder's files into ``tmp`` (a temporary folder
    beside ``out``); on success it replaces ``out`` by renames (a previous ``out`` is moved aside
    first, then removed), so readers see the old folder or the whole new one. On any error the
    temporary folder is removed and ``out`` is left as it was; what a killed run left (SIGKILL
    runs no cleanup) is removed by the next writer of ``out`` (``sweep_stale``)."""

    def __init__(self, out: str | os.PathLike, flag: str | None = None):
        self.out = Path(out)
        self.flag = flag
        self.tmp: Path | None = None

    def __enter__(self) -> Path:
        make_dirs(self.out.parent, self.flag)
        sweep_stale(self.out)
        try:
            self.tmp = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.tmp-{os.getpid()}-", dir=self.out.parent))
        except OSError as e:
            raise os_failure(e, "create a folder beside", self.out) from None
        return self.tmp

    def __exit__(self, exc_type, exc, tb) -> bool:
        import shutil

        assert self.tmp is not None
        if exc_type is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            return False
        try:
            _ordinary_modes(self.tmp)
            old = None
            if self.out.exists():  # os.replace cannot replace a non-empty folder: move the old one aside
                old = self.out.parent / f".{self.out.name}.old-{os.getpid()}"
                os.replace(self.out, old)
            os.replace(self.tmp, self.out)
        except OSError as e:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise os_failure(e, "write", self.out) from None
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return False
