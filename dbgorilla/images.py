"""Container images built on this machine, for when no registry can be reached.

Three images, each rebuilt only when its inputs change (a sha256 of them is kept as a label):

- base:     Debian bookworm `minbase` made with debootstrap from the Debian mirror apt uses, then
            `docker import`ed. It carries python3 and wget (the healthchecks use them).
- weaviate: the pinned, Go-built `weaviate-server` (the binary backend's own) on that base.
- embedder: `dbgorilla.embedding` (the text2vec-transformers API on ONNX MiniLM) on that base, with
            wheels downloaded on the host and the model files copied from the installed packages.

Every build context holds everything the build needs and the builds run with `network_mode="none"`.
Users who can reach a registry keep the official images: docker/docker-compose.yml defaults to them.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from dbgorilla.config import WEAVIATE_VERSION, cache_dir, weaviate_binary_path
from dbgorilla.errors import BuildFailed, MissingDependency
from llm.encoder import onnx_model_path, tokenizer_path

Echo = Callable[[str], None]

DOCKER_DIR = Path(__file__).resolve().parents[1] / "docker"
PACKAGE_DIR = Path(__file__).resolve().parent
INPUTS_LABEL = "dbgorilla.inputs"
BASE_SUITE = "bookworm"
BASE_PACKAGES = ("python3", "python3-venv", "wget", "ca-certificates")
BASE_IMAGE = f"dbgorilla/base:{BASE_SUITE}"
WEAVIATE_IMAGE = f"dbgorilla/weaviate:{WEAVIATE_VERSION}"
EMBEDDER_IMAGE = "dbgorilla/t2v-minilm:onnx"
#: The official images, used where they are already present (pulled by a user with a registry).
OFFICIAL_WEAVIATE_IMAGE = f"cr.weaviate.io/semitechnologies/weaviate:{WEAVIATE_VERSION}"
OFFICIAL_EMBEDDER_IMAGE = (
    "cr.weaviate.io/semitechnologies/transformers-inference:sentence-transformers-all-MiniLM-L6-v2"
)
#: What the embedder image installs; pinned to the versions this interpreter runs, so both agree.
EMBEDDER_REQUIREMENTS = ("fastapi", "uvicorn", "onnxruntime", "tokenizers", "numpy")


@dataclass(frozen=True)
class BuiltImage:
    name: str
    tag: str
    built: bool  # False when an image with the same inputs was already there
    seconds: float
    size_bytes: int

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "tag": self.tag,
            "built": self.built,
            "seconds": round(self.seconds, 1),
            "size_mb": round(self.size_bytes / 1e6, 1),
        }


def docker_client():  # type: ignore[no-untyped-def]
    """The `docker` package's client, or a typed error that says why there is none."""
    try:
        from docker.errors import DockerException

        import docker
    except ImportError as error:  # pragma: no cover - a dependency of the project
        raise MissingDependency("the `docker` Python package is not installed") from error
    try:
        client = docker.from_env(timeout=600)
        client.ping()
    except DockerException as error:
        raise MissingDependency(f"no working Docker engine: {error}") from error
    return client


def images_dir() -> Path:
    return cache_dir() / "images"


def _digest(parts: Iterator[bytes]) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def _tree_digest(root: Path) -> str:
    """A digest of every file's relative path and bytes: what a build context holds."""

    def parts() -> Iterator[bytes]:
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            yield str(path.relative_to(root)).encode()
            yield path.read_bytes()

    return _digest(parts())


def _existing(client, tag: str, inputs: str) -> object | None:  # type: ignore[no-untyped-def]
    from docker.errors import ImageNotFound

    try:
        image = client.images.get(tag)
    except ImageNotFound:
        return None
    return image if (image.labels or {}).get(INPUTS_LABEL) == inputs else None


def _size(client, tag: str) -> int:  # type: ignore[no-untyped-def]
    return int(client.images.get(tag).attrs.get("Size", 0))


def _debian_mirror() -> str:
    """The mirror apt is configured with: the one Debian source this machine can reach."""
    for source in (Path("/etc/apt/sources.list.d/debian.sources"), Path("/etc/apt/sources.list")):
        if not source.exists():
            continue
        for line in source.read_text().splitlines():
            line = line.strip()
            if line.startswith("URIs:"):
                return line.split()[1]
            if line.startswith("deb ") and "security" not in line:
                return next(word for word in line.split()[1:] if "://" in word)
    return os.environ.get("DBGORILLA_DEBIAN_MIRROR", "http://deb.debian.org/debian")


def _unmount_below(path: Path) -> None:
    """Unmount what a failed debootstrap left mounted in its chroot (it mounts proc and sys), deepest
    first, so that removing the folder never walks into the host's /proc."""
    root = str(path.resolve())
    mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines() if len(line.split()) > 1]
    for point in sorted((m for m in mounts if m == root or m.startswith(root + "/")), key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True)


def _clear(work: Path) -> None:
    if work.exists():
        _unmount_below(work)
    shutil.rmtree(work, ignore_errors=True)


#: A download or mirror hiccup can fail one debootstrap (the two failures seen here were two builds
#: at once, which the lock now prevents); a second try from a clean folder is cheap beside a failed tier.
DEBOOTSTRAP_TRIES = 2


def _debootstrap(work: Path, rootfs: Path, echo: Echo) -> None:
    mirror = _debian_mirror()
    command = [
        "debootstrap",
        "--variant=minbase",
        f"--include={','.join(BASE_PACKAGES)}",
        BASE_SUITE,
        str(rootfs),
        mirror,
    ]
    failures = []
    for attempt in range(1, DEBOOTSTRAP_TRIES + 1):
        _clear(work)
        work.mkdir(parents=True)
        echo(f"images: debootstrap {BASE_SUITE} (minbase, {', '.join(BASE_PACKAGES)}) from {mirror}, try {attempt}")
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode == 0:
            return
        log = rootfs / "debootstrap" / "debootstrap.log"
        detail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
        failures.append(f"try {attempt}: {(result.stdout + result.stderr)[-1000:]}\n{detail}")
    _clear(work)
    raise BuildFailed("debootstrap failed:\n" + "\n".join(failures))


def build_base(client, echo: Echo = print) -> BuiltImage:  # type: ignore[no-untyped-def]
    inputs = _digest(iter([BASE_SUITE.encode(), " ".join(BASE_PACKAGES).encode()]))
    started = time.monotonic()
    if _existing(client, BASE_IMAGE, inputs) is not None:
        return BuiltImage("base", BASE_IMAGE, False, time.monotonic() - started, _size(client, BASE_IMAGE))
    if shutil.which("debootstrap") is None:
        raise MissingDependency("building the base image needs debootstrap (apt-get install debootstrap)")
    if os.geteuid() != 0:
        raise MissingDependency("debootstrap needs root to build the base image; or pull the official images")
    work = images_dir() / "base"
    rootfs = work / "rootfs"
    _debootstrap(work, rootfs, echo)
    for cache in (rootfs / "var" / "cache" / "apt" / "archives", rootfs / "var" / "lib" / "apt" / "lists"):
        for item in cache.glob("*"):
            if item.is_file():
                item.unlink()
    archive = work / "rootfs.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(rootfs, arcname=".")
    client.api.import_image_from_file(
        str(archive),
        repository=BASE_IMAGE.split(":")[0],
        tag=BASE_SUITE,
        changes=[f"LABEL {INPUTS_LABEL}={inputs}", 'CMD ["/bin/bash"]'],
    )
    _clear(work)
    seconds = time.monotonic() - started
    echo(f"images: {BASE_IMAGE} imported in {seconds:.0f} s")
    return BuiltImage("base", BASE_IMAGE, True, seconds, _size(client, BASE_IMAGE))


def _docker_build(client, name: str, tag: str, context: Path, base: str, echo: Echo) -> BuiltImage:  # type: ignore[no-untyped-def]
    """Build `context` into `tag` with no network, unless an image of the same inputs is there."""
    from docker.errors import BuildError

    inputs = _digest(iter([base.encode(), _tree_digest(context).encode()]))
    started = time.monotonic()
    if _existing(client, tag, inputs) is not None:
        return BuiltImage(name, tag, False, time.monotonic() - started, _size(client, tag))
    echo(f"images: building {tag}")
    try:
        client.images.build(
            path=str(context),
            tag=tag,
            buildargs={"BASE": base},
            labels={INPUTS_LABEL: inputs},
            network_mode="none",
            rm=True,
            forcerm=True,
        )
    except BuildError as error:
        log = "".join(str(item.get("stream", item.get("error", ""))) for item in error.build_log)
        raise BuildFailed(f"building {tag} failed: {error.msg}\n{log[-2000:]}") from error
    seconds = time.monotonic() - started
    echo(f"images: {tag} built in {seconds:.0f} s")
    return BuiltImage(name, tag, True, seconds, _size(client, tag))


def _fresh_context(name: str) -> Path:
    context = images_dir() / name
    shutil.rmtree(context, ignore_errors=True)
    context.mkdir(parents=True)
    shutil.copy2(DOCKER_DIR / name / "Dockerfile", context / "Dockerfile")
    return context


def build_weaviate_image(client, base: str, echo: Echo = print) -> BuiltImage:  # type: ignore[no-untyped-def]
    binary = weaviate_binary_path()
    if not binary.exists():
        raise MissingDependency(f"{binary} is missing: run `dbgorilla setup weaviate` first")
    context = _fresh_context("weaviate")
    try:
        os.link(binary, context / "weaviate-server")  # same disk: no copy of ~150 MB
    except OSError:
        shutil.copy2(binary, context / "weaviate-server")
    return _docker_build(client, "weaviate", WEAVIATE_IMAGE, context, base, echo)


def embedder_requirements() -> list[str]:
    return [f"{name}=={importlib.metadata.version(name)}" for name in EMBEDDER_REQUIREMENTS]


def _wheels(echo: Echo) -> Path:
    """The embedder's wheels, downloaded on the host once per requirement set and kept."""
    requirements = "\n".join(embedder_requirements()) + "\n"
    key = hashlib.sha256(requirements.encode()).hexdigest()[:16]
    wheels = images_dir() / "wheels" / key
    if (wheels / "requirements.txt").exists():
        return wheels
    shutil.rmtree(wheels, ignore_errors=True)
    wheels.mkdir(parents=True)
    echo(f"images: downloading the embedder's wheels ({', '.join(embedder_requirements())})")
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:", "-d", str(wheels)]
    result = subprocess.run([*command, *embedder_requirements()], capture_output=True, text=True)
    if result.returncode != 0:
        shutil.rmtree(wheels, ignore_errors=True)
        raise BuildFailed(f"pip download failed: {result.stderr[-2000:]}")
    (wheels / "requirements.txt").write_text(requirements)
    return wheels


def build_embedder_image(client, base: str, echo: Echo = print) -> BuiltImage:  # type: ignore[no-untyped-def]
    wheels = _wheels(echo)
    context = _fresh_context("embedder")
    shutil.copytree(wheels, context / "wheels")
    (context / "model").mkdir()
    shutil.copy2(onnx_model_path(), context / "model" / "model.onnx")
    shutil.copy2(tokenizer_path(), context / "model" / "tokenizer.json")
    app = context / "app" / "dbgorilla"
    (app / "embedding").mkdir(parents=True)
    for module in ("__init__.py", "errors.py"):
        shutil.copy2(PACKAGE_DIR / module, app / module)
    for module in sorted((PACKAGE_DIR / "embedding").glob("*.py")):
        shutil.copy2(module, app / "embedding" / module.name)
    # the encoder is the lowest layer's (`llm.encoder`); the image holds it alone, not llm's clients
    (context / "app" / "llm").mkdir()
    (context / "app" / "llm" / "__init__.py").write_text("")
    shutil.copy2(PACKAGE_DIR.parent / "llm" / "encoder.py", context / "app" / "llm" / "encoder.py")
    return _docker_build(client, "embedder", EMBEDDER_IMAGE, context, base, echo)


def build_images(echo: Echo = print) -> list[BuiltImage]:
    """Base, Weaviate and embedder images: built when missing or out of date, reused otherwise."""
    client = docker_client()
    with _build_lock(echo):
        base = build_base(client, echo)
        return [base, build_weaviate_image(client, base.tag, echo), build_embedder_image(client, base.tag, echo)]


@contextmanager
def _build_lock(echo: Echo) -> Iterator[None]:
    """One build at a time per machine: two processes (two test runs, `up` beside `setup images`) that
    debootstrap into the same folder corrupt each other's packages. The second waits, then finds
    the images built and reuses them."""
    folder = images_dir()
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".build.lock", "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            echo("images: another process is building them; waiting for it")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def official_images_present() -> bool:
    """True when both official images are in the engine already (pulled by a user who can)."""
    from docker.errors import ImageNotFound

    client = docker_client()
    try:
        client.images.get(OFFICIAL_WEAVIATE_IMAGE)
        client.images.get(OFFICIAL_EMBEDDER_IMAGE)
    except ImageNotFound:
        return False
    return True
