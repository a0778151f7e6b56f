#!/usr/bin/env bash
# All of one H200 run's GPU work in one script (device tool: run with carry [".whl"]).
# Writes everything under $OUT/h200 and packs it as $OUT/h200.tgz.
set -u
export PYTHONUNBUFFERED=1 NO_COLOR=1 COLUMNS=140
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD/src
D=$OUT/h200; mkdir -p $D
{ nvidia-smi; python3 --version; python3 -c "import torch; print(torch.__version__)"; nproc; } > $D/machine.txt 2>&1
python3 -m gpuvet check --format json --fail-on never > $D/check.json 2> $D/check.err; echo "check json rc=$?" >> $D/rc.txt
python3 -m gpuvet check --verbose --fail-on never > $D/check.txt 2>&1; echo "check rc=$?" >> $D/rc.txt
python3 -m gpuvet check --format markdown --fail-on never > $D/check.md 2>&1
python3 -m gpuvet recommend --format json > $D/recommend.json 2>&1; echo "recommend rc=$?" >> $D/rc.txt
python3 -m pytest -p no:cacheprovider -rA tests/test_gpu_live.py > $D/pytest-gpu.txt 2>&1; echo "pytest gpu rc=$?" >> $D/rc.txt
timeout 240 python3 -m pytest -q -p no:cacheprovider -rs tests > $D/pytest-all.txt 2>&1; echo "pytest all rc=$?" >> $D/rc.txt
timeout 300 python3 bench/check_speed.py --runs 5 --label h200 --python python3 > $D/check_speed.txt 2>&1
cp bench/results/check_speed-h200.* $D/ 2>/dev/null
bash bench/h200/failures.sh $D 2>&1 | tail -50 > $D/failures.txt
tar czf $OUT/h200.tgz -C $OUT h200
cat $D/rc.txt $D/check_speed.txt; head -c 3000 $D/pytest-gpu.txt
