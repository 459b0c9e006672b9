#!/usr/bin/env python3
"""Independent check of `rlktop report --format json` on a Kineto trace.

Usage: check_report.py TRACE(.json|.json.gz) REPORT.json

Reads the trace with the standard json module (decimals kept exact), sums
per kernel name the count and duration (ns) of events with cat "kernel"
(case-insensitive, ph "X"), the kernel totals, and busy time = union of
[ts, ts+dur) of kernel, gpu_memcpy and gpu_memset events per device
(args.device, else pid), summed over devices, and the same union over kernels
only; compares busy_ns with the kernel-only union (the JSON contract) and
gpu_busy_ns with the union that includes memcpy and memset.
Prints "OK ..." or "FAIL ..." with the differences; exit status 1 on FAIL.
"""
import json,gzip,sys,collections,re
from decimal import Decimal
def ns(v):
    # ts/dur are decimal microseconds (int, or float text kept as str).
    return int(Decimal(str(v))*1000)
def load(f):
    raw=open(f,'rb').read()
    if raw[:2]==b'\x1f\x8b': raw=gzip.decompress(raw)
    # keep exact decimals
    d=json.loads(raw, parse_float=str)  # exact: Decimal only where needed
    return d['traceEvents'] if isinstance(d,dict) else d
f,rep=sys.argv[1],sys.argv[2]
evs=load(f)
k=collections.defaultdict(lambda:[0,0]); ivs=collections.defaultdict(list); kivs=collections.defaultdict(list); kc=kt=0
for e in evs:
    c=str(e.get('cat','')).lower()
    if e.get('ph')!='X' or c not in ('kernel','gpu_memcpy','gpu_memset'): continue
    s=ns(e['ts']); d=ns(e.get('dur',0))
    dev=(e.get('args') or {}).get('device', e.get('pid'))
    ivs[dev].append((s,s+d))
    if c=='kernel':
        kivs[dev].append((s,s+d))
        k[e['name']][0]+=1; k[e['name']][1]+=d; kc+=1; kt+=d
def union(per_dev):
    total=0
    for dev,l in per_dev.items():
        l.sort(); cs,ce=None,None
        for s,e in l:
            if cs is None or s>ce:
                if cs is not None: total+=ce-cs
                cs,ce=s,e
            else: ce=max(ce,e)
        if cs is not None: total+=ce-cs
    return total
if kc==0:
    # No GPU work: rlktop shows CPU operators by self time (the documented
    # rule of tracer.Trace.CPUOpKernels): per thread, an op's duration
    # minus the directly nested ops' (clipped to its end), placed at its
    # start, all on device -1.
    ops=[]
    for e in evs:
        if e.get('ph')=='X' and str(e.get('cat','')).lower()=='cpu_op':
            d=ns(e.get('dur',0))
            if d>0: ops.append((str(e.get('pid')),str(e.get('tid')),ns(e['ts']),d,e['name']))
    ops.sort(key=lambda o:(o[0],o[1],o[2],-o[3]))
    self_=[o[3] for o in ops]; stack=[]
    for i,(p,t,s,d,n) in enumerate(ops):
        while stack:
            j=stack[-1]; pj,tj,sj,dj,_=ops[j]
            if pj==p and tj==t and s<sj+dj: break
            stack.pop()
        if stack:
            j=stack[-1]; self_[j]-=min(s+d,ops[j][2]+ops[j][3])-s
        stack.append(i)
    for i,(p,t,s,d,n) in enumerate(ops):
        if self_[i]<=0: continue
        k[n][0]+=1; k[n][1]+=self_[i]; kc+=1; kt+=self_[i]
        ivs[-1].append((s,s+self_[i])); kivs[-1].append((s,s+self_[i]))
busy=union(ivs); kbusy=union(kivs)
r=json.load(open(rep))
ok=True
t=r['totals']
if (t['kernel_count'],t['kernel_total_ns'],t['busy_ns'])!=(kc,kt,kbusy):
    print("TOTALS DIFFER rlktop",t['kernel_count'],t['kernel_total_ns'],t['busy_ns'],"python",kc,kt,kbusy); ok=False
if t.get('gpu_busy_ns')!=busy:
    print("GPU BUSY DIFFERS rlktop",t.get('gpu_busy_ns'),"python",busy); ok=False
# A name has one row per category its launches fall in: sum them.
rk={}
for x in r['kernels']:
    c0,t0=rk.get(x['name'],(0,0))
    rk[x['name']]=(c0+x['count'],t0+x['total_ns'])
for n,(c,tt) in k.items():
    if rk.get(n)!=(c,tt): print("KERNEL DIFF",n[:80],rk.get(n),(c,tt)); ok=False
if len(rk)!=len(k): print("kernel row count",len(rk),len(k)); ok=False
print(("OK " if ok else "FAIL ")+f.split('/')[-1], kc, kt, busy, kbusy)
sys.exit(0 if ok else 1)
