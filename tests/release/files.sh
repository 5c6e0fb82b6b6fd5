# What packaging (Bioconda, Debian) and citing need: an MIT LICENSE, a
# CITATION.cff that reads as YAML with the project's version, a CHANGELOG
# with an entry for the version, and all three installed with the
# documentation. Usage: files.sh SOURCE_DIR VERSION BUILD_DIR
src=$1 version=$2 build=$3
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }

if grep -q '^MIT License$' "$src/LICENSE" && grep -q 'Permission is hereby granted, free of charge' "$src/LICENSE"
then pass; else fail "LICENSE is not the MIT licence"; fi
if python3 - "$src/CITATION.cff" "$version" <<'PY'
import sys
try:
    import yaml
except ImportError:  # the checks below need only the plain lines then
    yaml = None
text = open(sys.argv[1]).read()
if yaml:
    cff = yaml.safe_load(text)
    assert cff["cff-version"].startswith("1.2"), cff["cff-version"]
    assert str(cff["version"]) == sys.argv[2], cff["version"]
    assert cff["license"] == "MIT" and cff["type"] == "software" and cff["authors"] and cff["title"]
else:
    assert f'version: "{sys.argv[2]}"' in text and "license: MIT" in text
PY
then pass; else fail "CITATION.cff: not valid, or not version $version, MIT"; fi
if grep -q "^## \[$version\]" "$src/CHANGELOG.md" && grep -q '^## \[Unreleased\]' "$src/CHANGELOG.md"
then pass; else fail "CHANGELOG.md has no entry for $version"; fi

prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null 2>&1
for f in LICENSE CHANGELOG.md CITATION.cff README.md; do
    if [ -f "$prefix/share/doc/seqmatch/$f" ]; then pass; else fail "$f not installed in share/doc/seqmatch"; fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
