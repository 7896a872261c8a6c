"""`xsimpp download`: fetch a dataset into a data root, resumable, checked, installed all at once.

For each file of a source (``sources.py``): download into ``<root>/.xsimpp-download/<source>/``
as ``<name>.part``, resuming an earlier partial file with an HTTP ``Range`` request (a server
that ignores it sends the whole file, which then replaces the partial one); a connection that
drops mid-way is resumed up to ``retries`` times. The size and sha256 are then checked against
the package's checksum (or ``--sha256``/``--checksums``); a mismatch deletes the file and stops
with one sentence. Only when every file of the run is verified is anything installed: archives
are unpacked into a temporary folder first (members that would escape it, links and devices are
refused) and then moved into place by renames; a folder that already exists is replaced whole,
single files by ``os.replace``. A run that stops anywhere before leaves the data root as it was
(and the partial downloads, for the next run to resume).

Sources of xsim++ negatives (``laser_xsimpp``) are read back with xsimpp's own augmented-data
reader before anything is installed (a JSON object describing every line, with string types), and
installed with the sidecar ``eng_Latn_augmented.<split>.meta.json`` (style ``laser-published``,
URLs, sha256) that `xsimpp eval` reads into its signatures.

Offline (connection refused, no DNS, timeout), gated (HTTP 401/403, or FLORES+ without
``HF_TOKEN``) and missing (HTTP 404) are each one sentence (``MissingResourceError``; exit 2).
"""

from __future__ import annotations

import hashlib
import http.client
import logging
import os
import shutil
import socket
import tarfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable

from ..version import __version__
from ..errors import BadInputError, MissingResourceError
from ..paths import user_data_dir
from ..textio import atomic_write_text, check_output_dir, make_dirs, os_failure
from .base import KNOWN_ERRTYPES, LASER_PUBLISHED, AugmentedTargets, augmented_file_names, check_errtypes
from .sources import (BUCC_PAIRS, FLORES200, LASER_XSIMPP_SPLITS, TATOEBA, RemoteFile, Source, bucc2018, flores_plus,
                      laser_xsimpp)

log = logging.getLogger(__name__)

SOURCES = ("flores200", "flores_plus", "tatoeba", "bucc2018", "laser_xsimpp")
STAGING = ".xsimpp-download"
SUMS_FILE = "SHA256SUMS.xsimpp"
_CHUNK = 1 << 16


@dataclass
class DownloadResult:
    source: Source
    root: Path
    installed: list[Path] = field(default_factory=list)
    verified: bool = True  # False when some file was accepted with --unverified
    resumed_bytes: int = 0  # bytes kept from earlier partial downloads
    fetched_bytes: int = 0
    # xsim++ negatives: variants per error type, by split, as the errtype JSON spells the types
    errtypes: dict[str, dict[str, int]] = field(default_factory=dict)
    unknown_errtypes: list[str] = field(default_factory=list)  # types `xsimpp eval` needs --allow-errtype for


def default_root(home: str = "data") -> Path:
    """Where downloads go without --to: a folder of the user data dir; ``data`` (every dataset
    searches it) unless the source says otherwise (xsim++ negatives: ``augmented``)."""
    return user_data_dir() / home


def resolve_source(name: str, langs: Iterable[str] = (), pairs: Iterable[str] = (), splits: Iterable[str] = ()
                   ) -> Source:
    """The ``Source`` for a name and, for FLORES+ / BUCC / LASER's xsim++ negatives, the languages,
    pairs or splits asked for."""
    langs, pairs = [c for c in langs if c.strip()], [p for p in pairs if p.strip()]
    splits = [s for s in splits if s.strip()]
    if name not in SOURCES:
        raise BadInputError(f"unknown download source '{name}'; known: {', '.join(SOURCES)}")
    if splits and name != "laser_xsimpp":
        raise BadInputError(f"--split chooses the splits of LASER's xsim++ negatives; {name} is downloaded whole")
    if name == "laser_xsimpp":
        bad = [s for s in splits if s not in LASER_XSIMPP_SPLITS]
        if bad:
            raise BadInputError(f"LASER's xsim++ negatives have the splits {', '.join(LASER_XSIMPP_SPLITS)}, "
                                f"not {', '.join(bad)}")
        if langs or pairs:
            raise BadInputError("LASER's xsim++ negatives are English only: --langs and --pair do not apply")
        return laser_xsimpp(tuple(dict.fromkeys(splits)) or ("devtest",))
    if langs and name != "flores_plus":
        raise BadInputError(f"--langs chooses FLORES+ languages; {name} is downloaded whole")
    if pairs and name != "bucc2018":
        raise BadInputError(f"--pair chooses BUCC 2018 pairs; {name} has none")
    if name == "flores200":
        return FLORES200
    if name == "tatoeba":
        return TATOEBA
    if name == "bucc2018":
        bad = [p for p in pairs if p not in BUCC_PAIRS]
        if bad:
            raise BadInputError(f"BUCC 2018 has the pairs {', '.join(BUCC_PAIRS)}, not {', '.join(bad)}")
        return bucc2018(tuple(pairs) or BUCC_PAIRS)
    if not langs:
        raise BadInputError("FLORES+ has over 200 languages: choose some with --langs (e.g. --langs kea,fur); "
                            "English (eng_Latn) comes with them")
    return flores_plus(tuple(dict.fromkeys(["eng_Latn", *(_flores_plus_code(c) for c in langs)])))


def _flores_plus_code(code: str) -> str:
    """A FLORES+ file code from any code xsimpp resolves (``kea`` -> ``kea_Latn``); FLORES+ codes
    that FLORES-200 lacks (``cmn_Hans``) are taken as given when they have the ``xxx_Xxxx`` shape."""
    import re

    from .languages import FLORES200_CODES, resolve_language

    code = code.strip()
    if re.fullmatch(r"[a-z]{3}_[A-Z][a-z]{3}", code):
        return code
    return resolve_language(code, list(FLORES200_CODES))


def _parse_sums(sha256: Iterable[str], checksums_file: str | os.PathLike | None, files: tuple[RemoteFile, ...]
                ) -> dict[str, str]:
    """User-given checksums by file path (``HEX`` alone names the only file of a one-file run)."""
    from ..textio import read_lines

    given: dict[str, str] = {}
    lines = list(sha256)
    if checksums_file:
        for ln in read_lines(checksums_file, allow_empty_lines=True):
            if ln.strip():
                hexsum, _, name = ln.strip().partition(" ")
                lines.append(f"{name.strip().lstrip('*')}={hexsum}")
    by_base = {Path(f.path).name: f.path for f in files}
    names = {f.path for f in files} | set(by_base)
    for item in lines:
        name, sep, value = item.rpartition("=")
        value = value.strip().lower()
        if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
            raise BadInputError(f"--sha256 takes NAME=HEX with 64 hexadecimal digits, got '{item}'")
        if not sep:
            if len(files) != 1:
                raise BadInputError(f"this download has {len(files)} files: give --sha256 NAME=HEX for each "
                                    f"(e.g. {files[0].path}=...)")
            name = files[0].path
        if name not in names:
            raise BadInputError(f"--sha256 names '{name}', which this download does not fetch "
                                f"(its files: {', '.join(f.path for f in files[:4])}{' ...' if len(files) > 4 else ''})")
        given[by_base.get(name, name)] = value
    return given


# Bounds of a download's patience: up to 100 resumes of a dropped connection, and from 0.1 s to
# one hour of waiting for the server (urllib refuses 0 and negative timeouts with a ValueError; an
# hour is past any server's answer, so a larger value is a unit mistake).
MAX_RETRIES = 100
MIN_TIMEOUT, MAX_TIMEOUT = 0.1, 3600.0


def check_attempts(retries: int, timeout: float) -> None:
    """``retries`` and ``timeout`` within their bounds, before anything is fetched or written."""
    if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= MAX_RETRIES:
        raise BadInputError(f"--retries is an integer from 0 to {MAX_RETRIES}, not {retries!r}")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not MIN_TIMEOUT <= timeout <= MAX_TIMEOUT:
        raise BadInputError(f"--timeout is a number of seconds from {MIN_TIMEOUT:g} to {MAX_TIMEOUT:g}, "
                            f"not {timeout!r}")


def download(source: str | Source, to: str | os.PathLike | None = None, *, langs: Iterable[str] = (),
             pairs: Iterable[str] = (), splits: Iterable[str] = (), mirror: str | None = None, sha256: Iterable[str] = (),
             checksums_file: str | os.PathLike | None = None, unverified: bool = False, token: str | None = None,
             retries: int = 3, timeout: float = 30.0, progress: Callable[[str, int, int | None], None] | None = None
             ) -> DownloadResult:
    """Fetch, verify and install ``source`` under ``to`` (default: ``default_root()``); see the module
    docstring. ``mirror`` replaces the source's base URL (an internal mirror, a local server)."""
    src = source if isinstance(source, Source) else resolve_source(source, langs, pairs, splits)
    check_attempts(retries, timeout)
    token = token if token is not None else (os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN"))
    if src.gated and not token and not mirror:
        raise MissingResourceError(src.gated)
    given = _parse_sums(sha256, checksums_file, src.files)
    files = []
    for f in src.files:
        want = given.get(f.path)
        if want and f.sha256 and want != f.sha256:
            log.warning("%s: using the --sha256 you gave for %s instead of the one xsimpp keeps", src.title, f.path)
        files.append(replace(f, sha256=want or f.sha256, size=f.size if not want or want == f.sha256 else None))
    missing = [f.path for f in files if not f.sha256]
    if missing and not unverified:
        why = f" ({src.no_checksum})" if src.no_checksum else ""
        raise BadInputError(f"xsimpp keeps no sha256 for {src.title}{why}: pass --sha256 {missing[0]}=HEX"
                            f"{' (one per file) or --checksums FILE' if len(missing) > 1 else ''}, or --unverified "
                            "to accept what the server sends")
    base = (mirror.rstrip("/") + "/") if mirror else src.base_url
    root = Path(to).expanduser() if to else default_root(src.home)
    check_output_dir(root, "--to")
    stage = make_dirs(root / STAGING / src.name, "--to")
    result = DownloadResult(src, root, verified=not missing)
    headers = {"User-Agent": f"xsimpp/{__version__}"}
    if token and (src.gated or mirror):
        headers["Authorization"] = f"Bearer {token}"
    done: list[tuple[RemoteFile, Path, str]] = []
    for f in files:
        path, digest = _fetch(base + f.path, stage / (f.path.replace("/", "__")), f, headers, src, result,
                              retries=retries, timeout=timeout, progress=progress)
        done.append((f, path, digest))
    if src.negatives:
        _check_negatives(src, done, result)
    _install(src, root, stage, done, result)
    shutil.rmtree(stage, ignore_errors=True)
    try:
        (root / STAGING).rmdir()
    except OSError:
        pass
    return result


# -- fetching -----------------------------------------------------------------------------------


def _offline(url: str, reason) -> MissingResourceError:
    host = urllib.request.urlparse(url).netloc
    return MissingResourceError(f"cannot reach {host} ({reason}): are you offline? Partial downloads are kept and "
                                "resume when you run the command again")


def _open(url: str, headers: dict, offset: int, timeout: float, src: Source):
    h = dict(headers)
    if offset:
        h["Range"] = f"bytes={offset}-"
    try:
        return urllib.request.urlopen(urllib.request.Request(url, headers=h), timeout=timeout)
    except urllib.error.HTTPError as e:
        if e.code in (401, 403):
            raise MissingResourceError(src.gated or f"{url} refused access (HTTP {e.code}); it may need a login or "
                                       "a token") from None
        if e.code == 404:
            raise MissingResourceError(f"{url} was not found (HTTP 404); is the source or --mirror right?") from None
        if e.code == 416:
            return None  # the range starts at or past the end: the partial file is not a prefix of this one
        raise MissingResourceError(f"{url} answered HTTP {e.code} ({e.reason})") from None
    except urllib.error.URLError as e:
        reason = e.reason
        if isinstance(reason, ConnectionRefusedError):
            reason = "connection refused"
        elif isinstance(reason, socket.gaierror):
            reason = "its name does not resolve"
        raise _offline(url, reason) from None
    except (TimeoutError, socket.timeout):
        raise _offline(url, f"no answer in {timeout:g} s") from None
    except (ConnectionError, http.client.HTTPException) as e:
        raise _offline(url, type(e).__name__) from None


def _sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _fetch(url: str, dest: Path, f: RemoteFile, headers: dict, src: Source, result: DownloadResult, *, retries: int,
           timeout: float, progress) -> tuple[Path, str]:
    """``dest`` holding the verified bytes of ``url`` (resumed from ``dest.part``); returns its sha256."""
    part = dest.with_name(dest.name + ".part")
    if dest.is_file():
        dest.replace(part)  # a file verified by an earlier run that stopped before installing: check again
    attempt = 0
    while True:
        have = part.stat().st_size if part.is_file() else 0
        if f.size is not None and have > f.size:
            part.unlink()
            have = 0
        total = f.size
        if f.size is not None and have == f.size:
            break  # complete from an earlier run: only the checks below remain
        try:
            resp = _open(url, headers, have, timeout, src)
            if resp is None:  # HTTP 416: start over
                part.unlink(missing_ok=True)
                resp = _open(url, headers, 0, timeout, src)
                have = 0
            with resp:
                if have and resp.status == 206:
                    if not (resp.headers.get("Content-Range") or "").startswith(f"bytes {have}-"):
                        raise MissingResourceError(f"{url} answered a resume request with another byte range "
                                                   f"({resp.headers.get('Content-Range')})")
                    result.resumed_bytes += have
                    mode = "ab"
                else:
                    have, mode = 0, "wb"
                length = resp.headers.get("Content-Length")
                total = have + int(length) if length and length.isdigit() else f.size
                with open(part, mode) as out:
                    while True:
                        chunk = resp.read(_CHUNK)
                        if not chunk:
                            break
                        out.write(chunk)
                        have += len(chunk)
                        result.fetched_bytes += len(chunk)
                        if progress:
                            progress(f.path, have, total)
            if total is not None and have < total:
                raise http.client.IncompleteRead(b"", total - have)
        except (http.client.IncompleteRead, ConnectionError, TimeoutError, socket.timeout) as e:
            have = part.stat().st_size if part.is_file() else 0
            attempt += 1
            if attempt > retries:
                size = f" of {total}" if total else ""
                raise MissingResourceError(
                    f"the download of {f.path} stopped at {have}{size} bytes ({type(e).__name__}) after "
                    f"{retries + 1} tries; run the command again to resume it") from None
            log.warning("%s: connection lost at %d bytes; resuming (try %d of %d)", f.path, have, attempt + 1,
                        retries + 1)
            time.sleep(min(2.0 ** attempt * 0.1, 2.0))
            continue
        except OSError as e:
            raise os_failure(e, "write", part) from None
        break
    size = part.stat().st_size
    if f.size is not None and size != f.size:
        part.unlink()
        raise BadInputError(f"{f.path} from {url} has {size} bytes, not the {f.size} expected: the server sent a "
                            "truncated or different file; nothing was installed (run again to retry)")
    digest = _sha256_of(part)
    if f.sha256 and digest != f.sha256:
        part.unlink()
        raise BadInputError(f"{f.path} from {url} has sha256 {digest[:16]}..., not the expected {f.sha256[:16]}...: "
                            "the download is corrupt or the file changed upstream; nothing was installed")
    part.replace(dest)
    return dest, digest


# -- checking xsim++ negatives ------------------------------------------------------------------


def _check_negatives(src: Source, done: list, result: DownloadResult) -> None:
    """Read each split's two downloaded files as `xsimpp eval` will (every augmented line described
    by a ``{"src", "errtype"}`` entry) and count the variants per error type. Types xsimpp does not
    know (case-insensitively: causality, entity, number) are accepted here and listed in the result,
    since `xsimpp eval` then needs ``--allow-errtype`` for them."""
    from ..textio import parse_json, read_bytes, read_lines

    staged = {f.path: path for f, path, _ in done}
    for split in LASER_XSIMPP_SPLITS:
        text_name, json_name = augmented_file_names("eng_Latn", split)
        if text_name not in staged:
            continue
        where = f"{json_name} from {src.title}"
        lines = read_lines(staged[text_name])
        raw = parse_json(read_bytes(staged[json_name]), where)
        names = sorted({v["errtype"] for v in raw.values() if isinstance(v, dict) and isinstance(v.get("errtype"), str)}
                       ) if isinstance(raw, dict) else []
        try:
            errtypes = check_errtypes(raw, lines, where, allow=names)
        except BadInputError as e:
            raise BadInputError(f"{e}; nothing was installed") from None
        result.errtypes[split] = AugmentedTargets("eng_Latn", split, lines, errtypes).category_counts()
        known = {t.lower() for t in KNOWN_ERRTYPES}
        result.unknown_errtypes += [n for n in names if n.lower() not in known and n not in result.unknown_errtypes]


def _negatives_sidecars(src: Source, stage: Path, done: list, result: DownloadResult) -> list[tuple[Path, str]]:
    """The style sidecar of each split (staged, with the path below dest it goes to)."""
    from ..textio import json_text

    out = []
    for split, counts in result.errtypes.items():
        names = augmented_file_names("eng_Latn", split)
        meta = {"style": LASER_PUBLISHED, "made_by": "LASER's published xsim++ negatives (facebookresearch/LASER "
                                                      "tasks/xsimplusplus), installed by `xsimpp download laser_xsimpp`",
                "urls": [src.base_url + n for n in names], "verified": result.verified, "xsimpp": __version__,
                "sha256": {f.path: digest for f, _, digest in done if f.path in names}, "counts": counts}
        target = f"{split}_augmented/{names[0]}.meta.json"
        path = stage / target.replace("/", "__")
        atomic_write_text(path, json_text(meta))
        out.append((path, target))
    return out


# -- installing ---------------------------------------------------------------------------------


def _safe_extract(archive: Path, into: Path) -> None:
    """Unpack a tar archive (any compression) into ``into``, refusing members that would land
    outside it, links and special files."""
    try:
        with tarfile.open(archive) as tar:
            members = tar.getmembers()
            for m in members:
                target = (into / m.name).resolve()
                if not (m.isfile() or m.isdir()) or not str(target).startswith(str(into.resolve()) + os.sep):
                    raise BadInputError(f"{archive.name} holds '{m.name}', which is not a plain file or folder "
                                        "inside the archive; refusing to unpack it")
            if hasattr(tarfile, "data_filter"):  # Python >= 3.10.12 / 3.11.4: the standard's own guard too
                tar.extractall(into, members=members, filter="data")
            else:  # pragma: no cover - older Pythons; the members were checked above
                tar.extractall(into, members=members)
    except (tarfile.TarError, EOFError) as e:
        raise BadInputError(f"{archive.name} is not a readable archive ({e}); nothing was installed") from None


def _swap_in(new: Path, target: Path) -> None:
    """Move ``new`` to ``target`` by renames; an existing ``target`` folder is replaced whole."""
    make_dirs(target.parent)
    if target.is_dir() and new.is_dir():
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        target.replace(old)
        try:
            new.replace(target)
        except OSError:
            old.replace(target)
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(new, target)


def _install(src: Source, root: Path, stage: Path, done: list, result: DownloadResult) -> None:
    dest = root / src.dest
    sums: dict[str, str] = {}
    try:
        if src.unpack:
            unpacked = stage / "unpacked"
            shutil.rmtree(unpacked, ignore_errors=True)
            make_dirs(unpacked)
            for _, path, _ in done:
                _safe_extract(path, unpacked)
            if src.flatten:  # every file straight into dest (BUCC: bucc2018/<pair>/<pair>.<split>.<lang>)
                for p in sorted(unpacked.rglob("*")):
                    if p.is_file():
                        sums[p.name] = _sha256_of(p)
                        _swap_in(p, dest / p.name)
                        result.installed.append(dest / p.name)
            else:
                for p in sorted(unpacked.iterdir()):
                    _swap_in(p, dest / p.name)
                    result.installed.append(dest / p.name)
            for f, _, digest in done:
                sums[f.path] = digest
        else:
            moves = [(path, f.install_as or f.path) for f, path, _ in done]
            if src.negatives:
                # An old sidecar goes first and the new one last: a stop in between leaves LASER's files
                # without one ("unrecorded", read as the paper's negatives), never under another's style.
                sidecars = _negatives_sidecars(src, stage, done, result)
                for _, target in sidecars:
                    (dest / target).unlink(missing_ok=True)
                moves += sidecars
            for path, target in moves:
                _swap_in(path, dest / target)
                result.installed.append(dest / target)
            for f, _, digest in done:
                sums[f.path] = digest
        old = {}
        sums_path = dest / SUMS_FILE
        if sums_path.is_file():
            for ln in sums_path.read_text(encoding="utf-8").splitlines():
                hexsum, _, name = ln.partition("  ")
                if name:
                    old[name] = hexsum
        old.update(sums)
        atomic_write_text(sums_path, "".join(f"{v}  {k}\n" for k, v in sorted(old.items())))
    except OSError as e:
        raise os_failure(e, "install into", dest) from None
