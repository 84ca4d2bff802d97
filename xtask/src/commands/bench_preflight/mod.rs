//! `bench-preflight`: `cozystack-policies preflight` over the snapshot of a
//! large management cluster, its time and peak memory held to the budget.

mod cluster;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::benchmark::within_budget;
use layout::resolve;

/// The budget: seconds of wall time on the 2-core machine.
const SECONDS: f64 = 10.0;
/// The budget: peak memory, in multiples of the snapshot's size.
const TIMES_THE_FILE: u64 = 10;

/// Generate the snapshot of a large management cluster (hundreds of
/// tenants, thousands of HelmReleases and PersistentVolumeClaims), as the
/// capture block writes it, and time `preflight` over it: wall time and
/// peak memory against the budget (10 s, 10 times the file's size).
#[derive(clap::Args)]
pub struct Args {
    /// Tenants of the generated cluster (about 80 objects each).
    #[arg(long, default_value_t = 500)]
    pub tenants: usize,
    /// The CLI to run.
    #[arg(long, default_value = "target/release/cozystack-policies")]
    pub cli: PathBuf,
    /// Where the snapshot is written.
    #[arg(long, default_value = "target/tmp/bench-preflight/snapshot.yaml")]
    pub snapshot: PathBuf,
}

pub fn run(root: &Path, args: Args) -> Result<ExitCode> {
    let snapshot = resolve(root, &args.snapshot);
    if let Some(dir) = snapshot.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let cli = resolve(root, &args.cli);
    let block = Command::new(&cli)
        .arg("snapshot-command")
        .output()
        .with_context(|| format!("running {}; run `make dist` first", cli.display()))?;
    let block = String::from_utf8(block.stdout).context("the capture block is not UTF-8")?;
    let objects = cluster::write(&snapshot, args.tenants, &block)?;
    let bytes = std::fs::metadata(&snapshot)?.len();
    let (elapsed, peak, status, first) = measure(&cli, &snapshot)?;
    // Tenths, in integers.
    let tenths = |n: u64, of: u64| {
        let t = n.saturating_mul(10) / of.max(1);
        format!("{}.{}", t / 10, t % 10)
    };
    let seconds = elapsed.as_secs_f64();
    println!(
        "snapshot: {objects} objects, {} MiB ({})",
        tenths(bytes, 1 << 20),
        snapshot.display()
    );
    println!("preflight: {first} ({status})");
    println!("time:   {seconds:.2} s (budget {SECONDS} s)");
    println!(
        "memory: {} MiB peak, {} times the file (budget {TIMES_THE_FILE} times)",
        tenths(peak, 1 << 20),
        tenths(peak, bytes)
    );
    let mut over = Vec::new();
    if seconds > SECONDS {
        over.push(format!("time {seconds:.2} s > {SECONDS} s"));
    }
    if peak > bytes.saturating_mul(TIMES_THE_FILE) {
        over.push(format!(
            "memory {} times the file > {TIMES_THE_FILE}",
            tenths(peak, bytes)
        ));
    }
    if status.code().is_none_or(|code| code == 2) {
        over.push(format!("preflight did not run to its end: {status}"));
    }
    Ok(within_budget(&over))
}

/// Runs `preflight` over `snapshot`: its wall time, its peak resident
/// memory, its exit status and the first line it printed.
///
/// The peak is the kernel's high-water mark (`VmHWM` of
/// `/proc/<pid>/status`), read every few milliseconds while it runs: the
/// last reading misses at most the last few milliseconds.
fn measure(cli: &Path, snapshot: &Path) -> Result<(Duration, u64, std::process::ExitStatus, String)> {
    let started = Instant::now();
    let mut child = Command::new(cli)
        .arg("preflight")
        .arg(snapshot)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("running {}; run `make dist` first", cli.display()))?;
    let mut stdout = child.stdout.take().context("no standard output")?;
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut text).map(|_| text)
    });
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    let status = loop {
        if let Some(kib) = std::fs::read_to_string(&status_file)
            .ok()
            .and_then(|status| high_water_mark(&status))
        {
            peak = peak.max(kib * 1024);
        }
        if let Some(status) = child.try_wait()? {
            break status;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let elapsed = started.elapsed();
    let text = reader
        .join()
        .map_err(|_| anyhow::anyhow!("reading preflight's output panicked"))??;
    let first = text.lines().next().unwrap_or_default().to_owned();
    Ok((elapsed, peak, status, first))
}

/// `VmHWM` of a `/proc/<pid>/status`, in KiB.
fn high_water_mark(status: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_high_water_mark_is_read_in_kib() {
        let status = "Name:\tx\nVmPeak:\t  100 kB\nVmHWM:\t   2048 kB\nVmRSS:\t 1024 kB\n";
        assert_eq!(super::high_water_mark(status), Some(2048));
        assert_eq!(super::high_water_mark("Name:\tx\n"), None);
    }
}
