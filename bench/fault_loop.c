/* What a first write to fresh anonymous memory costs, per 4 KiB page:
 * 256 buffers of 1 MiB (the per-I/O logs' buffer size), each filled 32
 * bytes at a time (one record per I/O) after being mapped three ways:
 * faulted in by the writes themselves, by madvise(MADV_POPULATE_WRITE),
 * or by mmap's MAP_POPULATE. docs/performance.md quotes it.
 * Build: cc -O2 -o fault_loop bench/fault_loop.c */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(void){
  size_t MB=1<<20; int n=256; /* 256 MiB */
  for(int mode=0;mode<3;mode++){
    double t0=now();
    for(int i=0;i<n;i++){
      char*p=mmap(0,MB,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
      if(mode==1) madvise(p,MB,MADV_POPULATE_WRITE);
      if(mode==2) { munmap(p,MB); p=mmap(0,MB,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS|MAP_POPULATE,-1,0);} 
      for(size_t j=0;j<MB;j+=32) *(volatile char*)(p+j)=1; /* fill as records would */
    }
    double t=now()-t0;
    printf("mode %d (%s): %.1f ns per 4k page, %.2f ns per 32B record\n",mode,mode==0?"fault":mode==1?"populate_write":"map_populate",t/(n*256)*1e9,t/(n*MB/32)*1e9);
  }
}
