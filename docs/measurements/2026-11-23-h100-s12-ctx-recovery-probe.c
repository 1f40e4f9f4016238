// Probe: can a process recover from a sticky device fault with a fresh, non-primary
// context? argv[1]: "own" (cuCtxCreate / cuCtxDestroy), "primary" (retain/reset),
// "side" (a second context created before the fault, used after it). argv[2]: "addr" or "trap".
#include <cuda.h>
#include <stdio.h>
#include <string.h>
static const char *PTX =
".version 8.0\n.target sm_80\n.address_size 64\n"
".visible .entry bad(.param .u64 p){ .reg .u64 a; .reg .u32 v; ld.param.u64 a,[p]; mov.u32 v,7; st.global.u32 [a],v; ret; }\n"
".visible .entry trapk(){ trap; ret; }\n"
".visible .entry good(.param .u64 p){ .reg .u64 a; .reg .u32 v; ld.param.u64 a,[p]; mov.u32 v,42; st.global.u32 [a],v; ret; }\n";
static const char *nm(CUresult r){ const char *s=0; cuGetErrorName(r,&s); return s?s:"?"; }
#define T(x) do{ CUresult r_=(x); printf("  %-40s -> %s\n", #x, nm(r_)); }while(0)
static int run_good(const char *who){
  CUmodule m; CUfunction f; CUdeviceptr d; unsigned v=0; CUresult r;
  if((r=cuModuleLoadData(&m,PTX))){ printf("%s: load %s\n",who,nm(r)); return 1; }
  cuModuleGetFunction(&f,m,"good");
  if((r=cuMemAlloc(&d,4))){ printf("%s: alloc %s\n",who,nm(r)); return 1; }
  void *args[]={&d};
  r=cuLaunchKernel(f,1,1,1,1,1,1,0,0,args,0); if(r){ printf("%s: launch %s\n",who,nm(r)); return 1; }
  r=cuCtxSynchronize(); if(r){ printf("%s: sync %s\n",who,nm(r)); return 1; }
  r=cuMemcpyDtoH(&v,d,4); printf("%s: good kernel wrote %u (%s)\n",who,v,nm(r));
  cuMemFree(d); cuModuleUnload(m); return v!=42;
}
static void fault(const char *kind){
  CUmodule m; CUfunction f; CUdeviceptr a=8;
  cuModuleLoadData(&m,PTX);
  if(!strcmp(kind,"trap")){ cuModuleGetFunction(&f,m,"trapk"); T(cuLaunchKernel(f,1,1,1,32,1,1,0,0,0,0)); }
  else { void *args[]={&a}; cuModuleGetFunction(&f,m,"bad"); T(cuLaunchKernel(f,1,1,1,32,1,1,0,0,args,0)); }
  T(cuCtxSynchronize());
}
int main(int c,char**v){
  CUdevice dev; CUcontext a,b,p; cuInit(0); cuDeviceGet(&dev,0);
  const char *mode=v[1], *kind=c>2?v[2]:"addr";
  printf("mode %s, fault %s\n",mode,kind);
  if(!strcmp(mode,"own")){
    T(cuCtxCreate(&a,NULL,0,dev)); run_good("ctx A before");
    fault(kind);
    T(cuCtxDestroy(a));
    T(cuCtxCreate(&b,NULL,0,dev)); return run_good("fresh ctx B after destroying A");
  } else if(!strcmp(mode,"side")){
    T(cuCtxCreate(&b,NULL,0,dev)); run_good("side ctx B before");
    T(cuCtxCreate(&a,NULL,0,dev)); fault(kind);
    T(cuCtxSetCurrent(b)); int r=run_good("side ctx B after A faulted");
    T(cuCtxDestroy(a)); T(cuCtxSetCurrent(b)); r|=run_good("side ctx B after A destroyed"); return r;
  } else {
    T(cuDevicePrimaryCtxRetain(&p,dev)); T(cuCtxSetCurrent(p)); run_good("primary before");
    fault(kind);
    T(cuDevicePrimaryCtxRelease(dev)); T(cuDevicePrimaryCtxReset(dev));
    T(cuDevicePrimaryCtxRetain(&p,dev)); T(cuCtxSetCurrent(p)); return run_good("primary after reset");
  }
}
