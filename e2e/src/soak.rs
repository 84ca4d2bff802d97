//! The soak's bookkeeping, apart from the server and the clients so it can
//! be tested: the verdict a case must keep, the memory samples, the
//! reference point the growth is measured from, and the printed table.

use std::fmt::Write as _;
use std::time::Duration;

use host::AdmissionResponse;

/// How far resident memory may grow past the reference point, in percent.
pub const MAX_GROWTH_PERCENT: u64 = 10;

/// What must stay the same for a case for the whole run: warnings and
/// audit annotations are left out, as monitor mode and the server's own
/// annotations are not the policy's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub code: Option<u16>,
    pub message: Option<String>,
}

impl From<&AdmissionResponse> for Decision {
    fn from(response: &AdmissionResponse) -> Self {
        Self {
            allowed: response.allowed,
            code: response.code(),
            message: response.message().map(str::to_owned),
        }
    }
}

/// One sample, taken each second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// Since the load started.
    pub at: Duration,
    /// The server's VmRSS.
    pub resident_kib: u64,
    /// Requests answered so far, by every client.
    pub requests: u64,
}

/// When the reference sample is taken: after the first 30 seconds, or a
/// sixth of a shorter run, so a short run still measures growth over most
/// of its length once the modules' first allocations are done.
pub fn warm_up(run: Duration) -> Duration {
    (run / 6).min(Duration::from_secs(30))
}

/// The first sample at or after the warm-up.
pub fn reference(samples: &[Sample], run: Duration) -> Option<Sample> {
    let warm_up = warm_up(run);
    samples.iter().find(|s| s.at >= warm_up).copied()
}

/// Whether `end` is within [`MAX_GROWTH_PERCENT`] of `reference`; the
/// message says by how much it grew when it is not.
pub fn check_growth(reference: Sample, end: Sample) -> Result<(), String> {
    let limit = reference.resident_kib * (100 + MAX_GROWTH_PERCENT) / 100;
    if end.resident_kib <= limit {
        return Ok(());
    }
    Err(format!(
        "resident memory grew from {} KiB at {}s to {} KiB at {}s, more than {MAX_GROWTH_PERCENT} % (limit {limit} KiB)",
        reference.resident_kib,
        reference.at.as_secs(),
        end.resident_kib,
        end.at.as_secs(),
    ))
}

/// `count` per second over `elapsed`, in whole requests.
pub fn per_second(count: u64, elapsed: Duration) -> u64 {
    let millis = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
    count
        .saturating_mul(1000)
        .checked_div(millis)
        .unwrap_or_default()
}

/// KiB as MiB with one decimal.
fn mib(kib: u64) -> String {
    format!("{}.{}", kib / 1024, kib % 1024 * 10 / 1024)
}

/// At most `rows` samples, evenly spread, the last one always included.
fn spread(samples: &[Sample], rows: usize) -> Vec<Sample> {
    let step = samples.len().div_ceil(rows.max(1)).max(1);
    let mut picked: Vec<Sample> = samples.iter().step_by(step).copied().collect();
    if let Some(last) = samples.last()
        && picked.last() != Some(last)
    {
        picked.push(*last);
    }
    picked
}

/// RSS over time with the request rate since the row before, and a bar per row
/// scaled to the largest sample so growth shows at a glance.
pub fn table(samples: &[Sample], rows: usize) -> String {
    let picked = spread(samples, rows);
    let top = picked
        .iter()
        .map(|s| s.resident_kib)
        .max()
        .unwrap_or(1)
        .max(1);
    let mut out = String::from("  time   RSS MiB   req/s\n");
    let mut previous = Sample {
        at: Duration::ZERO,
        resident_kib: 0,
        requests: 0,
    };
    for sample in &picked {
        let rate = per_second(
            sample.requests.saturating_sub(previous.requests),
            sample.at.saturating_sub(previous.at),
        );
        let bar = "#".repeat(usize::try_from(sample.resident_kib * 40 / top).unwrap_or(40));
        let _ = writeln!(
            out,
            "{:>5}s {:>9} {:>7}  {bar}",
            sample.at.as_secs(),
            mib(sample.resident_kib),
            rate
        );
        previous = *sample;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at: u64, resident_kib: u64, requests: u64) -> Sample {
        Sample {
            at: Duration::from_secs(at),
            resident_kib,
            requests,
        }
    }

    #[test]
    fn the_reference_is_thirty_seconds_in_or_a_sixth_of_a_short_run() {
        assert_eq!(warm_up(Duration::from_secs(300)), Duration::from_secs(30));
        assert_eq!(warm_up(Duration::from_secs(30)), Duration::from_secs(5));
        let samples: Vec<Sample> = (1..=30).map(|s| sample(s, 1000 + s, s * 10)).collect();
        assert_eq!(
            reference(&samples, Duration::from_secs(30)),
            Some(sample(5, 1005, 50))
        );
        assert_eq!(reference(&samples[..3], Duration::from_secs(30)), None);
    }

    #[test]
    fn growth_beyond_ten_percent_fails_and_says_by_how_much() {
        assert!(check_growth(sample(30, 1000, 0), sample(300, 1100, 0)).is_ok());
        let error = check_growth(sample(30, 1000, 0), sample(300, 1101, 0)).unwrap_err();
        assert!(
            error.contains("from 1000 KiB at 30s to 1101 KiB at 300s"),
            "{error}"
        );
    }

    #[test]
    fn the_table_keeps_the_last_sample_and_shows_the_rate() {
        let samples: Vec<Sample> = (1..=10).map(|s| sample(s, 2048, s * 100)).collect();
        let printed = table(&samples, 3);
        let lines: Vec<&str> = printed.lines().collect();
        assert_eq!(lines.len(), 1 + 4, "{printed}");
        assert!(
            lines
                .last()
                .unwrap()
                .starts_with("   10s       2.0     100"),
            "{printed}"
        );
    }
}
