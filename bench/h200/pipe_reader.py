"""What a pipe reader's strategy costs the writing job (issue 7): the bench's 1,000,000-line block-buffered job
writes into /dev/null (bare) or into a pipe read by a Python loop like gpuvet's pump (pipe size, read size,
the 4 ms gathering after a small read); the job reports its own CPU (getrusage).  ``REPS`` alternating runs,
medians.  ``python3 bench/h200/pipe_reader.py [LINES] ["variant;variant"]``."""
import os, sys, time, subprocess, statistics, fcntl, select
LOGGER = r'''import os, resource, sys
n = int(sys.argv[1])
w = sys.stdout.write
acc = 0.0
for step in range(n):
    acc += (step % 97) * 1e-3
    w(f"[rank0] step {step} | loss {2.5 - acc / (step + 1):.4f} | lr 3.0e-04 | tok/s {12000 + step % 500}\n")
sys.stdout.flush()
ru = resource.getrusage(resource.RUSAGE_SELF)
sys.stderr.write(f"{ru.ru_utime} {ru.ru_stime}\n")
'''
N = sys.argv[1] if len(sys.argv) > 1 else "1000000"
env = dict(os.environ); env.pop("PYTHONUNBUFFERED", None)
def job(stdout):
    r, w = os.pipe()
    p = subprocess.Popen([sys.executable, "-c", LOGGER, N], stdout=stdout, stderr=w, env=env)
    os.close(w)
    return p, r
def finish(p, r):
    p.wait()
    u, s = map(float, os.read(r, 100).split()); os.close(r)
    return u, s
null = os.open(os.devnull, os.O_WRONLY)
def bare():
    t = time.perf_counter(); p, r = job(null); u, s = finish(p, r); return time.perf_counter() - t, u, s
def piped(psize, chunk, coalesce, pin=False):
    rd, wr = os.pipe()
    if psize: fcntl.fcntl(rd, fcntl.F_SETPIPE_SZ, psize)
    t = time.perf_counter()
    p, r = job(wr); os.close(wr)
    allowed = os.sched_getaffinity(0)
    if pin:  # the reader on one CPU of its own (the job keeps them all): no wake-affine pull onto the job's CPU
        os.sched_setaffinity(0, {max(allowed)})
    buf = bytearray(1 << 20); mv = memoryview(buf)
    po = select.poll(); po.register(rd, select.POLLIN)
    while True:
        po.poll()
        got = 0
        n = os.readv(rd, (mv[:chunk],))
        if not n: break
        os.write(null, mv[:n]); got += n
        if chunk < (1<<20):
            while n == chunk:
                n = os.readv(rd, (mv[:chunk],)) if select.select([rd],[],[],0)[0] else 0
                if n: os.write(null, mv[:n]); got += n
        if coalesce and got < 65536: time.sleep(coalesce)
    u, s = finish(p, r); os.close(rd)
    if pin:
        os.sched_setaffinity(0, allowed)
    return time.perf_counter() - t, u, s
V = {"bare": bare,
     "64k-pipe,1M-read,nocoal": lambda: piped(0, 1<<20, 0),
     "1M-pipe,1M-read,4ms(current)": lambda: piped(1<<20, 1<<20, 0.004),
     "1M-pipe,64k-reads,4ms": lambda: piped(1<<20, 65536, 0.004),
     "1M-pipe,1M-read,nocoal": lambda: piped(1<<20, 1<<20, 0),
     "1M-pipe,1M-read,20ms": lambda: piped(1<<20, 1<<20, 0.020),
     "1M-pipe,1M-read,4ms,reader-pinned": lambda: piped(1<<20, 1<<20, 0.004, pin=True),
}
sel = sys.argv[2].split(";") if len(sys.argv) > 2 else list(V)
res = {k: [] for k in sel}
reps = int(os.environ.get("REPS", "5"))
for i in range(reps):
    for k in sel:
        res[k].append(V[k]())
for k in sel:
    w = [x[0] for x in res[k]]; u = [x[1] for x in res[k]]; s = [x[2] for x in res[k]]
    print(f"{k:32s} wall {statistics.median(w):.3f} job user {statistics.median(u):.3f} sys {statistics.median(s):.3f} cpu {statistics.median([a+b for a,b in zip(u,s)]):.3f}  (walls {' '.join('%.2f'%x for x in w)})")
print(os.getloadavg())
