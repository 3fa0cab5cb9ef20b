// fib(30) with one rayon::join per call and no cutoff, on a pool of 2
// threads: the same shape as bench/take_back's parallel_invoke line.
// Usage: zap_rayon_fib [runs] [threads]   (prints median and min in ms;
// threads defaults to 2)
use std::time::Instant;

fn fib(n: u64) -> u64 {
    if n < 2 {
        return n;
    }
    let (a, b) = rayon::join(|| fib(n - 1), || fib(n - 2));
    a + b
}

fn main() {
    let runs: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(7);
    let threads: usize = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(2);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a rayon thread pool");
    assert_eq!(pool.install(|| fib(30)), 832_040); // warm-up and check
    let mut ms: Vec<f64> = (0..runs)
        .map(|_| {
            let t0 = Instant::now();
            let r = pool.install(|| fib(30));
            assert_eq!(r, 832_040);
            t0.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    ms.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!("fib(30) rayon::join, pool of {} (ms)  {:.2} ms  (min {:.2})", threads, ms[ms.len() / 2], ms[0]);
}
