// The cores' clock as more of them run: T threads each run a chain of dependent
// multiplies (3 cycles each on every x86 core of the last decade; dependent adds of an
// immediate are folded at rename on recent cores) for ~0.5 s and print the cycles per
// ns it achieved (= GHz).
// With a second argument `tp`, eight independent chains instead: bound by the multiply
// port's throughput (one a cycle), which two threads on one physical core (SMT
// siblings, as a VM's vCPUs may be) share; then it prints multiplies per ns.
//   cc -O2 -pthread -static freq.c -o freq && ./freq 1 && ./freq 4 && ./freq 16 tp
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

static void *run_tp(void *arg) {
  const long n = 200000000L;
  unsigned long a = 3, b = 5, c = 7, d = 9, e = 11, f = 13, g = 15, h = 17, k = 5;
  double t0 = now();
  for (long i = 0; i < n; i += 8) {
    __asm__ volatile("imul %8, %0\n\timul %8, %1\n\timul %8, %2\n\timul %8, %3\n\t"
                     "imul %8, %4\n\timul %8, %5\n\timul %8, %6\n\timul %8, %7"
                     : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f), "+r"(g), "+r"(h) : "r"(k));
  }
  double t = now() - t0;
  *(double *)arg = n / t / 1e9;
  return NULL;
}

static void *run(void *arg) {
  const long n = 200000000L;
  unsigned long x = 3, k = 5;
  double t0 = now();
  for (long i = 0; i < n; i += 8) {
    __asm__ volatile("imul %1, %0\n\timul %1, %0\n\timul %1, %0\n\timul %1, %0\n\t"
                     "imul %1, %0\n\timul %1, %0\n\timul %1, %0\n\timul %1, %0" : "+r"(x) : "r"(k));
  }
  double t = now() - t0;
  *(double *)arg = 3.0 * n / t / 1e9;
  return NULL;
}

int main(int argc, char **argv) {
  int t = argc > 1 ? atoi(argv[1]) : 1;
  int tp = argc > 2 && argv[2][0] == 't';
  pthread_t th[256]; double ghz[256];
  for (int i = 0; i < t; i++) pthread_create(&th[i], NULL, tp ? run_tp : run, &ghz[i]);
  double s = 0, lo = 1e9;
  for (int i = 0; i < t; i++) { pthread_join(th[i], NULL); s += ghz[i]; if (ghz[i] < lo) lo = ghz[i]; }
  printf("%d thread(s)%s: mean %.2f %s, lowest %.2f\n", t, tp ? ", independent multiplies" : "", s / t, tp ? "per ns" : "GHz", lo);
  return 0;
}
