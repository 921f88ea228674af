#!/usr/bin/env python3
"""Fetches the Go toolchain and the Kubernetes 1.36 Go libraries the native harness imports
(tests/native) from Debian sid, without touching the machine's apt sources.

    scripts/native-deps.py CACHE_DIR HARNESS_DIR

CACHE_DIR (.cache/native) gets its own apt configuration (apt/), the downloaded .debs (debs/,
kept between runs: a file name holds the package's version, so a new version in sid is a new
download), the unpacked tree (root/: root/usr/lib/go-1.NN is Go, root/usr/share/gocode/src the
libraries) and env.sh, which sets PATH, GOPATH and the offline Go settings for the build.

Which packages: Go is the golang-1.NN-go that sid's golang-go depends on (sid's default Go), with
its -src. The libraries start from the five -dev packages of SEEDS; the rest is found from the
harness's imports: `go list -deps` over the unpacked tree names the import paths no package
provides yet, and for each, the Debian packages that hold its importers contribute their direct
golang-*-dev dependencies. This repeats until every import resolves, so only the packages the
harness builds from are fetched (the full Depends closure of the seeds is ~310 packages; most of
it is test and optional code the harness never imports). A failed download, or an import no
dependency provides, is an error that names the package or import path.
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time

SEEDS = ["golang-k8s-apiserver-dev", "golang-k8s-api-dev", "golang-k8s-apimachinery-dev",
         "golang-k8s-client-go-dev", "golang-cel-cel-go-dev"]
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
GOCODE = "usr/share/gocode/src/"


def fail(message):
    print(f"native-deps: error: {message}", file=sys.stderr)
    sys.exit(1)


def log(message):
    print(f"native-deps: {message}", file=sys.stderr)


def run(cmd, env=None, cwd=None):
    r = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{' '.join(cmd)} failed (exit {r.returncode}):\n{r.stderr.strip()}")
    return r.stdout


def debian_mirror():
    """The Debian mirror this machine already uses (its first non-security source), unless
    GPUADMIT_NATIVE_MIRROR names one."""
    if os.environ.get("GPUADMIT_NATIVE_MIRROR"):
        return os.environ["GPUADMIT_NATIVE_MIRROR"]
    for d in ["/etc/apt/sources.list.d"]:
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if name.endswith(".sources"):
                for line in open(os.path.join(d, name)):
                    m = re.match(r"URIs:\s*(\S+)", line)
                    if m and "security" not in m.group(1):
                        return m.group(1)
    if os.path.exists("/etc/apt/sources.list"):
        for line in open("/etc/apt/sources.list"):
            f = line.split()
            if f and f[0] == "deb" and "security" not in line:
                for word in f[1:]:
                    if re.match(r"[a-z]+://", word):
                        return word
    return "http://deb.debian.org/debian"


def apt_env(cache):
    apt = os.path.join(cache, "apt")
    os.makedirs(os.path.join(apt, "lists", "partial"), exist_ok=True)
    os.makedirs(os.path.join(apt, "cache", "archives", "partial"), exist_ok=True)
    with open(os.path.join(apt, "sources.list"), "w") as f:
        f.write(f"deb [signed-by={KEYRING}] {debian_mirror()} sid main\n")
    with open(os.path.join(apt, "apt.conf"), "w") as f:
        f.write(f'Dir::Etc::SourceList "{apt}/sources.list";\n'
                'Dir::Etc::SourceParts "/nonexistent";\n'
                f'Dir::State::Lists "{apt}/lists";\n'
                f'Dir::Cache "{apt}/cache";\n'
                'Dir::State::status "/var/lib/dpkg/status";\n'
                # apt-get download writes into debs/ as the calling user, not _apt.
                'APT::Sandbox::User "root";\n')
    return dict(os.environ, APT_CONFIG=os.path.join(apt, "apt.conf"))


class Archive:
    """sid's Packages index (the file apt-get update stored under apt/lists), read once."""

    def __init__(self, env):
        lists = os.path.join(os.path.dirname(env["APT_CONFIG"]), "lists")
        index = [f for f in os.listdir(lists) if re.search(r"_sid_main_binary-[a-z0-9]+_Packages", f)]
        if len(index) != 1:
            fail(f"expected one sid Packages index in {lists}, found {index}")
        # apt stores it compressed (lz4 by default); apt-helper reads every format apt writes.
        text = run(["/usr/lib/apt/apt-helper", "cat-file", os.path.join(lists, index[0])])
        self.info = {}
        for stanza in text.split("\n\n"):
            if not stanza.startswith("Package: golang"):
                continue
            fields = {}
            for line in stanza.splitlines():
                if not line.startswith((" ", "\t")) and ":" in line:
                    key, value = line.split(":", 1)
                    fields[key] = value.strip()
            self.info[fields["Package"]] = fields
        if not self.info:
            fail(f"no golang package in {index[0]}")

    def version(self, package):
        fields = self.info.get(package)
        return fields and fields["Version"]

    def go_dependencies(self, package):
        """Direct golang-*-dev Depends; of alternatives, the first sid has."""
        out = []
        for group in self.info[package].get("Depends", "").split(","):
            names = [re.sub(r"[\s(].*", "", a.strip()) for a in group.split("|")]
            real = [n for n in names if re.fullmatch(r"golang-.*-dev", n) and n in self.info]
            if real:
                out.append(real[0])
        return out

    def by_homepage(self, import_path):
        """The golang-*-dev packages whose Homepage is the import path's repository, longest
        match first (cenkalti/backoff has -v4, -v5 and -v7 packages: the caller reads their file
        lists). For imports a package uses without declaring the dependency (in sid: apiserver
        -> fsnotify, apimachinery -> go-difflib)."""
        matches = []
        for name, fields in self.info.items():
            home = re.sub(r"^https?://|(\.git)?/*$", "", fields.get("Homepage", "")).lower()
            if name.endswith("-dev") and home and (import_path.lower() + "/").startswith(home + "/"):
                matches.append((-len(home), name))
        return [name for _, name in sorted(matches)]


def toolchain(archive):
    """golang-1.NN-go that sid's golang-go depends on, and its -src."""
    depends = (archive.info.get("golang-go") or {}).get("Depends", "")
    m = re.search(r"golang-(1\.\d+)-go\b", depends)
    if not m:
        fail(f"sid's golang-go names no golang-1.NN-go (Depends: {depends!r})")
    return [f"golang-{m.group(1)}-go", f"golang-{m.group(1)}-src"], m.group(1)


def deb_name(archive, package):
    """The file apt-get download writes: name_version_arch.deb, an epoch's ':' as "%3a"."""
    fields = archive.info[package]
    return f"{package}_{fields['Version'].replace(':', '%3a')}_{fields['Architecture']}.deb"


def download(archive, env, debs, packages):
    """Downloads, in one apt-get call, the packages whose sid version is not in debs/ yet."""
    for p in packages:
        if not archive.version(p):
            fail(f"package {p} is not in sid's index")
    missing = [p for p in packages if not os.path.exists(os.path.join(debs, deb_name(archive, p)))]
    if not missing:
        return
    r = subprocess.run(["apt-get", "download", "-qq"] + [f"{p}={archive.version(p)}" for p in missing],
                       env=env, cwd=debs, capture_output=True, text=True)
    for p in missing:
        path = os.path.join(debs, deb_name(archive, p))
        if not os.path.exists(path):
            fail(f"download of {p} {archive.version(p)} failed (apt-get exit {r.returncode}):\n"
                 f"{r.stderr.strip()}")
        if os.path.getsize(path) != int(archive.info[p]["Size"]):
            os.remove(path)
            fail(f"download of {p} {archive.version(p)}: its size differs from sid's index")
    log(f"downloaded {len(missing)}: {' '.join(missing)}")


def contents(debs, deb):
    """The directories of Go source a .deb holds (cached beside it)."""
    listing = os.path.join(debs, deb + ".dirs")
    if not os.path.exists(listing):
        dirs = set()
        for line in run(["dpkg-deb", "--contents", os.path.join(debs, deb)]).splitlines():
            name = line.split()[-1].lstrip("./") if line.split() else ""
            if name.startswith(GOCODE) and name.endswith(".go"):
                dirs.add(os.path.dirname(name)[len(GOCODE):])
        with open(listing + ".tmp", "w") as f:
            f.write("\n".join(sorted(dirs)) + "\n")
        os.replace(listing + ".tmp", listing)
    return [d for d in open(listing).read().split("\n") if d]


def holds(dirs, imp):
    """Whether a package's directories hold an import path. Debian installs a major version
    module (module github.com/emicklei/go-restful/v3) at its path without /vN; GOPATH mode's
    minimal module compatibility resolves the /vN import there through its go.mod."""
    return imp in dirs or re.sub(r"/v[0-9]+(?=/|$)", "", imp, count=1) in dirs


def unpack(root, debs, wanted):
    """Unpacks the wanted .debs into root; starts root afresh when a version changed."""
    stamp = os.path.join(root, ".unpacked")
    have = set(open(stamp).read().split()) if os.path.exists(stamp) else set()
    if not have <= set(wanted):
        shutil.rmtree(root)
        have = set()
    os.makedirs(root, exist_ok=True)
    for deb in sorted(set(wanted) - have):
        run(["dpkg-deb", "-x", os.path.join(debs, deb), root])
        have.add(deb)
        with open(stamp, "w") as f:
            f.write("\n".join(sorted(have)) + "\n")


def go_env(cache, root, go_version):
    goroot = os.path.join(root, f"usr/lib/go-{go_version}")
    return {
        "PATH": f"{goroot}/bin:" + os.environ["PATH"],
        "GOROOT": goroot,
        "GOPATH": f"{cache}/gopath:{root}/usr/share/gocode",
        "GO111MODULE": "off",  # GOPATH mode: Debian's tree is a GOPATH (dh-golang builds so)
        "GOPROXY": "off",
        "GOTOOLCHAIN": "local",
        "GOFLAGS": "",
        "GOCACHE": f"{cache}/gocache",
        "CGO_ENABLED": "0",
        "GOTELEMETRY": "off",
    }


def harness_packages(harness):
    """gpuadmit.io/native and its subpackages (go list's "/..." skips the GOPATH symlink)."""
    out = []
    for d, _, files in os.walk(harness):
        if any(f.endswith(".go") for f in files) and "testdata" not in d.split(os.sep):
            rel = os.path.relpath(d, harness)
            out.append("gpuadmit.io/native" + ("" if rel == "." else "/" + rel))
    return sorted(out)


def import_graph(env, harness):
    """go list -deps over the harness (its tests too): (missing import -> importing dirs, the
    directories of every package that resolved)."""
    fmt = "{{.ImportPath}}\t{{.Dir}}\t{{if .Error}}missing{{end}}\t{{join .Imports \" \"}}"
    packages = harness_packages(harness)
    if not packages:
        fail(f"no Go package under {harness}")
    out = run(["go", "list", "-e", "-deps", "-test", "-f", fmt] + packages,
              env=dict(os.environ, **env), cwd=os.path.join(env["GOPATH"].split(":")[0], "src"))
    rows = [line.split("\t") for line in out.splitlines() if line]
    listed = {r[0] for r in rows}
    for p in packages:
        if p not in listed:
            fail(f"go list did not list {p} (is {harness} linked into the GOPATH?)")
    missing = {r[0] for r in rows if r[2] == "missing" and not r[1]}
    importers = {m: set() for m in missing}
    for path, directory, _, imports in rows:
        for imp in imports.split():
            if imp in missing and directory:
                importers[imp].add(directory)
    return importers, {r[1] for r in rows if r[1]}


class Resolver:
    def __init__(self, cache, harness, env, archive, tools, go_version):
        self.cache, self.harness, self.env, self.archive = cache, harness, env, archive
        self.tools, self.go_version = tools, go_version
        self.debs = os.path.join(cache, "debs")
        self.root = os.path.join(cache, "root")
        self.src = os.path.join(self.root, GOCODE)
        os.makedirs(self.debs, exist_ok=True)

    def dirs(self, package):
        return contents(self.debs, deb_name(self.archive, package))

    def providers(self, imp, candidates):
        download(self.archive, self.env, self.debs, candidates)
        return [q for q in candidates if holds(self.dirs(q), imp)]

    def provider_of(self, imp, importer_dirs, packages):
        """The package that holds imp, read from the file lists of downloaded candidates: the
        direct Depends of the packages holding its importers; else the packages whose Homepage
        is its repository; else the Depends of those Depends, level by level (Debian declares
        k8s.io/kube-openapi on apimachinery, not on apiserver, which imports it too)."""
        owner = {d: p for p in packages[len(self.tools):] for d in self.dirs(p)}
        holders = {owner.get(os.path.relpath(d, self.src)) for d in importer_dirs} - {None}
        have = set(packages)
        visited = set(holders)
        level = sorted({q for h in holders for q in self.archive.go_dependencies(h)} - visited)
        found = self.providers(imp, [q for q in level if q not in have])
        if not found:
            found = self.providers(imp, [q for q in self.archive.by_homepage(imp) if q not in have])
            if found:
                log(f"{imp}: in no Depends of its importers; {found[0]} (by Homepage) holds it")
        for _ in range(4):
            if found or not level:
                break
            visited |= set(level)
            level = sorted({q for h in level for q in self.archive.go_dependencies(h)} - visited)
            found = self.providers(imp, [q for q in level if q not in have])
        if not found:
            fail(f"import {imp} (from {', '.join(sorted(importer_dirs)) or '?'}) is in no "
                 f"dependency of {', '.join(sorted(holders)) or 'its importers'}")
        return found[0]

    def run(self, packages):
        started = time.time()
        for rounds in range(1, 100):
            download(self.archive, self.env, self.debs, packages)
            unpack(self.root, self.debs, [deb_name(self.archive, p) for p in packages])
            missing, used_dirs = import_graph(go_env(self.cache, self.root, self.go_version),
                                              self.harness)
            log(f"round {rounds}: {len(packages)} packages, {len(missing)} imports missing "
                f"({time.time() - started:.0f} s)")
            if missing:
                for imp, importer_dirs in sorted(missing.items()):
                    if not any(holds(self.dirs(p), imp) for p in packages[len(self.tools):]):
                        packages.append(self.provider_of(imp, importer_dirs, packages))
                continue
            # Converged: drop what no built package comes from (left from an earlier run).
            used = {os.path.relpath(d, self.src) for d in used_dirs if d.startswith(self.src)}
            unused = [p for p in packages[len(self.tools):]
                      if p not in SEEDS and not used & set(self.dirs(p))]
            if not unused:
                return packages
            log(f"no longer imported: {' '.join(unused)}")
            packages = [p for p in packages if p not in unused]
        fail("the import closure did not converge in 100 rounds")


def resolve(cache, harness):
    started = time.time()
    env = apt_env(cache)
    log("apt-get update (sid lists)")
    run(["apt-get", "update", "-qq", "--error-on=any"], env=env)
    archive = Archive(env)
    tools, go_version = toolchain(archive)

    # The harness as a GOPATH package: gopath/src/gpuadmit.io/native -> tests/native.
    link = os.path.join(cache, "gopath/src/gpuadmit.io/native")
    os.makedirs(os.path.dirname(link), exist_ok=True)
    if os.path.islink(link) and os.readlink(link) != harness:
        os.remove(link)
    if not os.path.islink(link):
        os.symlink(harness, link)

    # Start from the last run's set (what is still in sid), so a warm run unpacks nothing.
    previous = []
    manifest = os.path.join(cache, "packages.tsv")
    if os.path.exists(manifest):
        previous = [line.split("\t")[0] for line in open(manifest) if line.strip()]
    packages = list(tools) + list(SEEDS)
    packages += [p for p in previous if p in archive.info and p not in packages]
    resolver = Resolver(cache, harness, env, archive, tools, go_version)
    packages = resolver.run(packages)
    write_manifest(cache, archive, packages, go_version, resolver.root, time.time() - started)
    prune(resolver.debs, archive)


def prune(debs, archive):
    """Removes the .debs of versions sid no longer has (the cache keeps one version a package)."""
    for f in os.listdir(debs):
        m = re.fullmatch(r"([^_]+)_[^_]+_[^_]+\.deb(\.dirs)?", f)
        if m and m.group(1) in archive.info and not f.startswith(deb_name(archive, m.group(1))):
            os.remove(os.path.join(debs, f))


def write_manifest(cache, archive, packages, go_version, root, seconds):
    total = 0
    lines = []
    for p in sorted(packages):
        size = int(archive.info[p]["Size"])
        total += size
        lines.append(f"{p}\t{archive.version(p)}\t{size}")
    with open(os.path.join(cache, "packages.tsv"), "w") as f:
        f.write("\n".join(lines) + "\n")
    env = go_env(cache, root, go_version)
    with open(os.path.join(cache, "env.sh"), "w") as f:
        for k, v in env.items():
            f.write(f"export {k}='{v}'\n")
    digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()[:12]
    log(f"{len(packages)} packages, {total / 1048576:.1f} MiB (Go {go_version}; "
        f"set {digest}; {seconds:.0f} s); list in {cache}/packages.tsv")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        fail("usage: native-deps.py CACHE_DIR HARNESS_DIR")
    resolve(os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]))
