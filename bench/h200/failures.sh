#!/usr/bin/env bash
# Real GPU failures on the H200, run under `gpuvet run`, to capture real logs and crash bundles.
D=$1
mkdir -p $D/runs
# 1. a real out-of-memory: ask for more than the card has
python3 -m gpuvet run --timeout 120 --bundle $D/runs/oom -- python3 -c "
import torch
x = torch.empty(200 * 2**30, dtype=torch.uint8, device='cuda')
" > $D/runs/oom.txt 2>&1; echo "oom rc=$?" >> $D/rc.txt
# 2. a real device-side assert from user code (an index out of range): must blame nothing in the stack
python3 -m gpuvet run --timeout 120 --bundle $D/runs/assert -- python3 -c "
import torch
t = torch.zeros(10, device='cuda'); i = torch.tensor([20], device='cuda')
print(t[i].sum().item())
" > $D/runs/assert.txt 2>&1; echo "assert rc=$?" >> $D/rc.txt
# 3. a hang past --timeout
python3 -m gpuvet run --timeout 5 --bundle $D/runs/hang -- python3 -c "
import torch, time
torch.zeros(1, device='cuda'); time.sleep(60)
" > $D/runs/hang.txt 2>&1; echo "hang rc=$?" >> $D/rc.txt
for f in $D/runs/*.txt; do python3 -m gpuvet diagnose --format json $f > ${f%.txt}.diagnosis.json 2>&1; done
