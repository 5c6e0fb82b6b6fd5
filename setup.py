"""Builds the seqmatch Python package: a CPython extension with the C
library's sources compiled in (no CMake step, no CUDA), plus the FASTA/FASTQ
reader for Database.search and Database.count.

    pip install .                          # a virtual environment, network for setuptools
    pip install --no-build-isolation .     # with Debian's python3-setuptools and python3-wheel
    pip wheel --no-build-isolation .       # a wheel to install elsewhere (same Python, same platform)

Compiling the library's sources is most of the time pip takes (about 60
files). With SEQMATCH_LIBRARY_DIR set to a CMake build folder of the same
tree (cmake --build build builds them), only the extension's own file is
compiled and that build's static libraries (libseqmatch.a, libseqmatch_io.a)
are linked in instead.

setuptools builds in build-python/ (not build/, the CMake folder), or in
$SEQMATCH_PYTHON_BUILD.
"""
import glob
import os

from setuptools import Extension, setup

here = os.path.dirname(os.path.abspath(__file__))


def sources(*patterns):
    found = []
    for pattern in patterns:
        found += sorted(glob.glob(os.path.join("src", pattern)))
    return found


# output/: the reader's file loops (io/search_files.c, io/record_out.c) write through the formatter and writer
library = sources("base/*.c", "core/*.c", "engines/*.c", "engines/*/*.c", "runner/*.c", "backends/cpu/*.c", "io/*.c",
                  "output/*.c") + [
    "src/backends/cuda/cuda_backend.c",
    "src/backends/cuda/cuda_none.c",
    "src/backends/cuda/dfa_cuda_none.c",
    # output/bam.c's htslib loader: the package writes no BAM, so it loads nothing
    "src/backends/htslib_none.c",
]
macros = [("_POSIX_C_SOURCE", "200809L"), ("_DEFAULT_SOURCE", None), ("SEQMATCH_EXPERIMENTAL", None)]
libraries = ["z", "pthread", "m"]
# gzip through ISA-L and zstd when their Debian packages are there, as the CMake build does
for header, macro, lib in (("isa-l/igzip_lib.h", "SM_HAVE_ISAL", "isal"), ("zstd.h", "SM_HAVE_ZSTD", "zstd")):
    if any(os.path.exists(os.path.join(d, header)) for d in ("/usr/include", "/usr/local/include")):
        macros.append((macro, None))
        libraries.append(lib)

build_base = os.environ.get("SEQMATCH_PYTHON_BUILD", os.path.join(here, "build-python"))
os.makedirs(build_base, exist_ok=True)

extension_sources = ["python/_seqmatch.c"] + library
# setuptools compiles again when one of these is newer than the extension
headers = sorted(glob.glob("include/*.h") + glob.glob("src/**/*.h", recursive=True))
extra_objects = []
link_args = []
prebuilt = os.environ.get("SEQMATCH_LIBRARY_DIR")
if prebuilt:
    archives = [os.path.join(prebuilt, name) for name in ("libseqmatch_io.a", "libseqmatch.a")]
    missing = [a for a in archives if not os.path.exists(a)]
    if missing:
        raise SystemExit(f"SEQMATCH_LIBRARY_DIR={prebuilt}: {', '.join(missing)} not found "
                         "(cmake --build DIR --target seqmatch_static seqmatch_io)")
    extension_sources = ["python/_seqmatch.c"]
    extra_objects = archives
    # the library's symbols stay inside the extension, as when compiled in
    link_args = ["-Wl,--exclude-libs,ALL"]

# Flags after the package's own, e.g. SEQMATCH_PYTHON_CFLAGS="-O0 -g0": a
# build that only checks that the sources compile, link and give the same
# hits (the test suite's build from the sdist) takes a quarter of the time.
extra_cflags = os.environ.get("SEQMATCH_PYTHON_CFLAGS", "").split()

setup(
    package_dir={"": "python"},
    packages=["seqmatch"],
    # the type information: the marker and the extension's stub
    package_data={"seqmatch": ["py.typed", "_seqmatch.pyi"]},
    ext_modules=[
        Extension(
            "seqmatch._seqmatch",
            sources=extension_sources,
            include_dirs=["include", "src"],
            define_macros=macros,
            libraries=libraries,
            depends=headers,
            extra_objects=extra_objects,
            extra_link_args=link_args,
            extra_compile_args=["-std=c11", "-O2", "-fvisibility=hidden", "-Wno-unused-parameter"] + extra_cflags,
        )
    ],
    options={
        "build": {"build_base": build_base},
        "build_ext": {"parallel": os.cpu_count() or 1},
        "egg_info": {"egg_base": build_base},
    },
)
