"""The GIL hand-off (issue 7): a pump thread like gpuvet's copies a pipe (dd from /dev/zero) to /dev/null;
for 0.2 s a second thread runs pure Python (as loading the prefilter's patterns does).  MB/s pumped alone and
meanwhile, under the switch interval given (gpuvet's run uses 0.0005 s while the patterns load; Python's
default is 0.005 s).  ``python3 bench/h200/gil_handoff.py INTERVAL``."""
import os, sys, threading, time, subprocess
iv = float(sys.argv[1])
p = subprocess.Popen(["dd", "if=/dev/zero", "bs=8k", "count=200000", "status=none"], stdout=subprocess.PIPE)
fd = p.stdout.fileno()
import fcntl; fcntl.fcntl(fd, 1031, 1<<20)
null = os.open("/dev/null", os.O_WRONLY)
buf = bytearray(1<<20); got = [0]; marks = []
def pump():
    import select
    po = select.poll(); po.register(fd, select.POLLIN)
    while True:
        po.poll()
        n = os.readv(fd, (buf,))
        if not n: break
        os.write(null, memoryview(buf)[:n]); got[0] += n
t = threading.Thread(target=pump); t.start()
time.sleep(0.2)
def burn():
    old = sys.getswitchinterval(); sys.setswitchinterval(iv)
    t0 = time.perf_counter(); g0 = got[0]
    x = 0
    while time.perf_counter() - t0 < 0.2:
        x += sum(range(1000))
    marks.append((got[0]-g0)/0.2/1e6)
    sys.setswitchinterval(old)
g0=got[0]; t0=time.perf_counter(); time.sleep(0.2); base=(got[0]-g0)/0.2/1e6
b = threading.Thread(target=burn); b.start(); b.join()
print(f"interval {iv}: pump alone {base:.0f} MB/s, with a CPU-bound thread {marks[0]:.0f} MB/s")
p.kill(); t.join(timeout=2)
