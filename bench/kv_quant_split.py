#!/usr/bin/env python3
"""Where the KV quantizer's error comes from, keys or values (issue 29): a float32 model of
core/kv_quant.h inside transformers, free of the engines' own noise.

The GGUF is loaded by transformers (dequantized to float32); an attention function registered with
AttentionInterface replaces each layer's post-RoPE keys and/or values by their reconstruction
before attention: `turbo:B` is our scheme (f32 norm, x/‖x‖ rotated by H·D/√d with the fixed signs
of kv_quant.h, Lloyd-Max levels of N(0, 1) at B bits, nearest level), `urot:B` a uniform absmax
quantizer after the same rotation, `q80:8` llama.cpp's q8_0 (absmax per 32, f16 scale). Every
token's own key and value are read back quantized, as in the engines' prefill. `w=N` keeps the last
N keys/values of each query in full precision (KIVI's window). Perplexity over tokens 1..n-1 and the
exact KL(p_none ‖ p_spec) over the whole vocabulary, against the unquantized run.

    .venv/bin/python bench/kv_quant_split.py MODEL.gguf TOKENS SPEC...
    SPEC: k=turbo:5 (keys only), v=turbo:5 (values only), kv=turbo:8 (both), k=turbo:8+v=turbo:4, kv=turbo:5+w=64

Text: bench/kv_quant_quality.py's `licenses`. A bench, not a test: minutes per spec on a small CPU.
"""
import sys, math, time, json, os
import numpy as np, torch
from pathlib import Path
torch.set_num_threads(2)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from kv_quant_oracle import rotation  # kv_quant.h's H·D/√d with its fixed signs
def lloyd(bits):
    from math import erf, sqrt, exp, pi, inf
    pdf=lambda x: 0 if abs(x)==inf else exp(-x*x/2)/sqrt(2*pi); cdf=lambda x: 0.5*(1+erf(x/sqrt(2))) if abs(x)!=inf else (1.0 if x>0 else 0.0)
    n=1<<bits; c=np.sqrt(3)*np.array([__import__('statistics').NormalDist().inv_cdf((k+.5)/n) for k in range(n)])
    for it in range(3000):
        t=[-inf]+list((c[1:]+c[:-1])/2)+[inf]
        new=np.array([(pdf(t[k])-pdf(t[k+1]))/max(cdf(t[k+1])-cdf(t[k]),1e-300) for k in range(n)])
        if np.max(abs(new-c))<1e-12: c=new; break
        c=new
    return c
_cache={}
def rot(d):
    if d not in _cache:
        _cache[d]=torch.tensor(rotation(d),dtype=torch.float64)
    return _cache[d]
_lv={}
def levels(b):
    if b not in _lv:
        c=lloyd(b); _lv[b]=(torch.tensor(c),torch.tensor((c[1:]+c[:-1])/2))
    return _lv[b]
def q_turbo(x,b):  # x [...,d] float
    d=x.shape[-1]; R=rot(d); xd=x.double()
    n=xd.norm(dim=-1,keepdim=True); u=xd/torch.clamp(n,min=1e-30)
    y=(u@R.T)*math.sqrt(d); c,t=levels(b)
    codes=torch.searchsorted(t,y.contiguous()); yh=c[codes]/math.sqrt(d)
    return (n.float().double()*(yh@R)).to(x.dtype)
def q_uniform_rot(x,b):  # rotated, per-vector absmax symmetric uniform
    d=x.shape[-1]; R=rot(d); y=x.double()@R.T
    m=y.abs().amax(dim=-1,keepdim=True); L=(1<<(b-1))-1; s=torch.clamp(m/L,min=1e-30)
    s=s.half().double()
    return ((torch.round(y/s).clamp(-L-1,L)*s)@R).to(x.dtype)
def q_q80(x,b=8):  # llama-like absmax per 32
    sh=x.shape; y=x.double().reshape(*sh[:-1],-1,32); L=(1<<(b-1))-1
    s=(y.abs().amax(-1,keepdim=True)/L).half().double().clamp(min=1e-30)
    return (torch.round(y/s)*s).reshape(sh).to(x.dtype)
CFG={}
def quant(x,spec):
    if spec is None: return x
    kind,b=spec
    return {'turbo':q_turbo,'urot':q_uniform_rot,'q80':q_q80}[kind](x,b)
def attn(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kw):
    # query [B,H,T,d], key/value [B,KH,T,d]
    kq=quant(key,CFG.get('k')); vq=quant(value,CFG.get('v'))
    W=CFG.get('window',0)
    g=query.shape[1]//key.shape[1]
    K=kq.repeat_interleave(g,1); V=vq.repeat_interleave(g,1)
    T=query.shape[2]; S=key.shape[2]
    s=(query.float()@K.float().transpose(-1,-2))*scaling
    i=torch.arange(T)[:,None]+(S-T); j=torch.arange(S)[None,:]
    if W:
        K0=key.repeat_interleave(g,1); s0=(query.float()@K0.float().transpose(-1,-2))*scaling
        near=(i-j)<W
        s=torch.where(near,s0,s)
    s=s.masked_fill(j>i,float('-inf'))
    p=torch.softmax(s,-1)
    if W:
        V0=value.repeat_interleave(g,1)
        o=(p*near)@V0.float()+(p*~near)@V.float()
    else: o=p@V.float()
    return o.transpose(1,2).contiguous().to(query.dtype), None
from transformers import AttentionInterface, AutoModelForCausalLM
AttentionInterface.register("kvq",attn)
def main():
    gguf=sys.argv[1]; n=int(sys.argv[2]); specs=sys.argv[3:]
    sys.path.insert(0,os.path.dirname(os.path.abspath(__file__))); import kv_quant_quality as B
    ids=B.tokens(gguf,n)
    d=os.path.dirname(gguf); 
    m=AutoModelForCausalLM.from_pretrained(d,gguf_file=os.path.basename(gguf),attn_implementation="kvq",dtype=torch.float32)
    m.eval()
    x=torch.tensor([ids])
    ref=None
    for sp in ['none']+specs:
        CFG.clear()
        if sp!='none':
            for part in sp.split('+'):
                k,v=part.split('=')
                if k=='w': CFG['window']=int(v)
                else:
                    kind,b=v.split(':'); 
                    for t in k: CFG[t]=(kind,int(b))
        t0=time.time()
        with torch.no_grad(): lg=m(x).logits[0].double()
        lp=torch.log_softmax(lg,-1)
        nll=-lp[:-1].gather(1,x[0,1:,None]).mean().item()
        if ref is None: ref=lp; kl=0
        else: kl=(ref.exp()*(ref-lp)).sum(-1)[:-1].mean().item()
        print(f"{sp:30s} ppl {math.exp(nll):9.4f} KL {kl:.5f} {time.time()-t0:.0f}s",flush=True)
        if sp=='none': p0=math.exp(nll)
        else: print(f"   vs none {100*(math.exp(nll)/p0-1):+.3f}%",flush=True)

if __name__ == "__main__":
    main()
