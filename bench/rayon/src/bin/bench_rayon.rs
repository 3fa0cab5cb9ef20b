// SPDX-License-Identifier: MIT
// bench/rayon/src/bin/bench_rayon.rs - rayon's row in bench/run: the same
// command line, workloads, sizes, checks and output line as the C++ binaries
// (bench/main.cpp, bench/harness.hpp):
//
//   bench_rayon --variants
//   bench_rayon VARIANT WORKLOAD SIZE [--idle]
//     -> variant workload size seconds allocations tasks peak_rss_kib idle_cpu_seconds
//   exit 0 ok, 1 wrong result, 2 bad arguments, 3 workload not expressed.
//
// How rayon expresses them (docs/benchmarks.md):
//   fib, qsort     rayon::join per fork (the half that can be stolen is the
//                  second, as in zap's parallel_invoke), on a worker (install)
//   skynet,        rayon::scope: spawn every child but the last, run the last
//   nqueens        inline, the scope waits (the blocking.hpp shape)
//   spawn, yield   in_place_scope from the external thread: its spawns go to
//                  the pool; yield's chains spawn themselves again
//   psum           par_iter().sum() (rayon's adaptive splitting)
//   pingpong       ThreadPool::spawn from the external thread, which sleeps
//                  (thread::park, a futex) until the task unparks it
// Threads: BENCH_THREADS (default 2), as the C++ binaries.
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

// Heap allocations since the process started (every allocation of Rust code
// goes through the global allocator; rayon's jobs included).
struct Counting;
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.alloc_zeroed(layout)
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.realloc(p, layout, size)
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        System.dealloc(p, layout)
    }
}
#[global_allocator]
static GLOBAL: Counting = Counting;

const VARIANT: &str = "rayon";
const YIELD_CHAINS: u64 = 64;
const SORT_CUTOFF: usize = 32;
const RANDOM_SEED: u32 = 2463534242;

fn xorshift32(state: &mut u32) -> u32 {
    *state ^= *state << 13;
    *state ^= *state >> 17;
    *state ^= *state << 5;
    *state
}

fn random_words(n: usize) -> Vec<u32> {
    let mut state = RANDOM_SEED;
    (0..n).map(|_| xorshift32(&mut state)).collect()
}

// --- the workloads ----------------------------------------------------------

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = rayon::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

fn insertion_sort(a: &mut [i32]) {
    for i in 1..a.len() {
        let x = a[i];
        let mut j = i;
        while j > 0 && a[j - 1] > x {
            a[j] = a[j - 1];
            j -= 1;
        }
        a[j] = x;
    }
}

// Hoare partition around the median of three, as bench/harness.hpp's.
fn partition(a: &mut [i32]) -> usize {
    let n = a.len();
    let (x, y, z) = (a[0], a[n / 2], a[n - 1]);
    let pivot = std::cmp::max(std::cmp::min(x, y), std::cmp::min(std::cmp::max(x, y), z));
    let (mut i, mut j) = (0usize, n - 1);
    loop {
        while a[i] < pivot {
            i += 1;
        }
        while a[j] > pivot {
            j -= 1;
        }
        if i >= j {
            return j + 1;
        }
        a.swap(i, j);
        i += 1;
        j -= 1;
    }
}

fn sort(a: &mut [i32]) {
    if a.len() <= SORT_CUTOFF {
        return insertion_sort(a);
    }
    let left = partition(a);
    let (l, r) = a.split_at_mut(left);
    rayon::join(|| sort(l), || sort(r));
}

fn skynet(first: u64, leaves: u64) -> u64 {
    if leaves == 1 {
        return first;
    }
    let step = leaves / 10;
    let mut sums = [0u64; 10];
    let (spawned, last) = sums.split_at_mut(9);
    rayon::scope(|s| {
        for (i, slot) in spawned.iter_mut().enumerate() {
            s.spawn(move |_| *slot = skynet(first + i as u64 * step, step));
        }
        last[0] = skynet(first + 9 * step, step);
    });
    sums.iter().sum()
}

#[derive(Clone, Copy, Default)]
struct Board {
    cols: u32,
    left: u32,
    right: u32,
    row: i32,
}

impl Board {
    fn free(&self, n: i32) -> u32 {
        !(self.cols | self.left | self.right) & ((1u32 << n) - 1)
    }
    fn place(&self, bit: u32) -> Board {
        Board { cols: self.cols | bit, left: (self.left | bit) << 1, right: (self.right | bit) >> 1, row: self.row + 1 }
    }
}

fn lowest_bit(bits: u32) -> u32 {
    bits & bits.wrapping_neg()
}

// One fork per placed queen; the last placement runs inline.
fn queens(b: Board, n: i32) -> u64 {
    if b.row == n {
        return 1;
    }
    let mut counts = [0u64; 32];
    let mut bits = b.free(n);
    rayon::scope(|s| {
        let mut slots = counts.iter_mut();
        while bits != 0 && (bits & (bits - 1)) != 0 {
            let next = b.place(lowest_bit(bits));
            let slot = slots.next().unwrap();
            s.spawn(move |_| *slot = queens(next, n));
            bits &= bits - 1;
        }
        if bits != 0 {
            *slots.next().unwrap() = queens(b.place(bits), n);
        }
    });
    counts.iter().sum()
}

fn nqueens_nodes(b: Board, n: i32) -> u64 {
    if b.row == n {
        return 1;
    }
    let mut count = 1;
    let mut f = b.free(n);
    while f != 0 {
        count += nqueens_nodes(b.place(lowest_bit(f)), n);
        f &= f - 1;
    }
    count
}

fn chain<'s>(s: &rayon::Scope<'s>, runs: &'s mut u64, budget: u64) {
    *runs += 1;
    if *runs < budget {
        s.spawn(move |s| chain(s, runs, budget));
    }
}

// A token the external thread sleeps on until a task hands it over.
struct Token {
    set: AtomicBool,
    waiter: std::thread::Thread,
}

impl Token {
    fn give(&self) {
        self.set.store(true, Ordering::Release); // pairs with take()'s acquire swap
        self.waiter.unpark();
    }
    fn take(&self) {
        while !self.set.swap(false, Ordering::Acquire) {
            std::thread::park();
        }
    }
}

// --- one measurement --------------------------------------------------------

struct Outcome {
    checksum: u64,
    tasks: u64,
}

struct Meter {
    seconds: f64,
    allocs: u64,
}

impl Meter {
    fn measure<F: FnOnce() -> Outcome>(&mut self, timed: F) -> Outcome {
        let a0 = ALLOCATIONS.load(Ordering::Relaxed);
        let t0 = Instant::now();
        let out = timed();
        self.seconds = t0.elapsed().as_secs_f64();
        self.allocs = ALLOCATIONS.load(Ordering::Relaxed) - a0;
        out
    }
}

fn expected_checksum(workload: &str, size: u64) -> u64 {
    match workload {
        "fib" => {
            let (mut a, mut b) = (0u64, 1u64);
            for _ in 0..size {
                let next = a + b;
                a = b;
                b = next;
            }
            a
        }
        "qsort" | "psum" => random_words(size as usize).iter().map(|&w| w as u64).sum(),
        "skynet" => size * (size - 1) / 2,
        "nqueens" => match size {
            8 => 92,
            10 => 724,
            12 => 14200,
            14 => 365596,
            _ => u64::MAX,
        },
        _ => size,
    }
}

fn warmup_size(workload: &str, size: u64) -> u64 {
    match workload {
        "fib" => if size > 5 { size - 5 } else { size },
        "nqueens" => if size > 2 { size - 2 } else { size },
        _ => std::cmp::max(1, size / 10),
    }
}

// One run of `workload` at `size`; timed under `meter` when given.
fn run(pool: &rayon::ThreadPool, workload: &str, size: u64, meter: Option<&mut Meter>) -> Option<Outcome> {
    let mut scratch = Meter { seconds: 0.0, allocs: 0 };
    let meter = meter.unwrap_or(&mut scratch);
    let n = size as usize;
    Some(match workload {
        "fib" => meter.measure(|| Outcome { checksum: pool.install(|| fib(size)), tasks: expected_checksum("fib", size + 1) - 1 }),
        "qsort" => {
            let mut v: Vec<i32> = random_words(n).into_iter().map(|w| w as i32).collect();
            meter.measure(|| {
                pool.install(|| sort(&mut v));
                Outcome { checksum: 0, tasks: 0 }
            });
            let sorted = v.windows(2).all(|w| w[0] <= w[1]);
            let sum = v.iter().map(|&x| x as u32 as u64).sum();
            Outcome { checksum: if sorted { sum } else { 0 }, tasks: 0 }
        }
        "skynet" => meter.measure(|| Outcome { checksum: pool.install(|| skynet(0, size)), tasks: size + (size - 1) / 9 }),
        "nqueens" => {
            let q = size as i32;
            let forks = nqueens_nodes(Board::default(), q) - 1;
            meter.measure(|| Outcome { checksum: pool.install(|| queens(Board::default(), q)), tasks: forks })
        }
        "spawn" => {
            let mut ran = vec![0u8; n];
            meter.measure(|| {
                pool.in_place_scope(|s| {
                    for slot in ran.iter_mut() {
                        s.spawn(move |_| *slot = 1);
                    }
                });
                Outcome { checksum: 0, tasks: size }
            });
            Outcome { checksum: ran.iter().map(|&r| r as u64).sum(), tasks: size }
        }
        "psum" => {
            let words = random_words(n);
            meter.measure(|| {
                use rayon::prelude::*;
                Outcome { checksum: pool.install(|| words.par_iter().map(|&w| w as u64).sum()), tasks: 0 }
            })
        }
        "yield" => {
            let mut runs = [0u64; YIELD_CHAINS as usize];
            meter.measure(|| {
                pool.in_place_scope(|s| {
                    for (i, r) in runs.iter_mut().enumerate() {
                        let i = i as u64;
                        let budget = size * (i + 1) / YIELD_CHAINS - size * i / YIELD_CHAINS;
                        s.spawn(move |s| chain(s, r, budget));
                    }
                });
                Outcome { checksum: 0, tasks: size }
            });
            Outcome { checksum: runs.iter().sum(), tasks: size }
        }
        "pingpong" => {
            let token = Arc::new(Token { set: AtomicBool::new(false), waiter: std::thread::current() });
            meter.measure(|| {
                for _ in 0..size {
                    let t = Arc::clone(&token);
                    pool.spawn(move || t.give());
                    token.take();
                }
                Outcome { checksum: size, tasks: size }
            })
        }
        _ => return None,
    })
}

// CPU seconds of every live thread, each from its own CPU-time clock (as
// bench/harness.hpp, which says why not getrusage: a thread running now has
// its time since the last tick left out of the process totals).
fn cpu_seconds() -> f64 {
    let tasks = match std::fs::read_dir("/proc/self/task") {
        Ok(tasks) => tasks,
        Err(_) => return -1.0,
    };
    let mut total = 0.0;
    for tid in tasks.flatten().filter_map(|t| t.file_name().to_str()?.parse::<i64>().ok()) {
        // per-thread (4), scheduler runtime (2): Linux's encoding of a thread's CPU clock
        let clock = ((!tid) << 3 | 4 | 2) as libc::clockid_t;
        let mut t: libc::timespec = unsafe { std::mem::zeroed() };
        if unsafe { libc::clock_gettime(clock, &mut t) } == 0 {
            total += t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9;
        }
    }
    total
}

// VmHWM of /proc/self/status (bench/main.cpp: not ru_maxrss, which survives execve).
fn peak_rss_kib() -> i64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(-1)
}

fn threads() -> usize {
    std::env::var("BENCH_THREADS").ok().and_then(|s| s.parse().ok()).unwrap_or(2)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 2 && args[1] == "--variants" {
        println!("{}", VARIANT);
        return;
    }
    if args.len() < 4 {
        eprintln!("usage: {} --variants | VARIANT WORKLOAD SIZE [--idle]", args[0]);
        std::process::exit(2);
    }
    let (variant, workload) = (args[1].as_str(), args[2].as_str());
    let size: u64 = args[3].parse().unwrap_or(0);
    let idle = args.len() > 4 && args[4] == "--idle";
    if variant != VARIANT {
        std::process::exit(3);
    }
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads()).build().expect("a rayon thread pool");
    if run(&pool, workload, warmup_size(workload, size), None).is_none() {
        std::process::exit(3);
    }
    let mut meter = Meter { seconds: 0.0, allocs: 0 };
    let out = run(&pool, workload, size, Some(&mut meter)).unwrap();
    let mut idle_cpu = -1.0;
    if idle {
        let before = cpu_seconds();
        std::thread::sleep(Duration::from_secs(1));
        idle_cpu = cpu_seconds() - before;
    }
    let expected = expected_checksum(workload, size);
    if out.checksum != expected {
        eprintln!("{} {} {}: wrong result {}, expected {}", variant, workload, size, out.checksum, expected);
        std::process::exit(1);
    }
    println!(
        "{}\t{}\t{}\t{:.6}\t{}\t{}\t{}\t{:.4}",
        variant, workload, size, meter.seconds, meter.allocs, out.tasks, peak_rss_kib(), idle_cpu
    );
}
