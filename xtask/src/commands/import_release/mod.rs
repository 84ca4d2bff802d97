//! `import-release`: a Cozystack release the bundle judges by, added in one
//! command (docs/releases.md).

mod metadata;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};
use releases::import::{Request, import, write_table};

/// Add a Cozystack release: read its charts from a Cozystack source tree
/// (or a folder of the reference data), write releases/<version>.json,
/// shared's table of releases, values-schema's schemas and table of nulls
/// (the oracle renders them), the application kinds of values-schema's
/// rules and the chart's list of releases (`cargo xtask chart`), and print
/// what changed from the previous release. Then `make dist`, and
/// `make oracle ORACLE_RELEASES=<version>`.
#[derive(clap::Args)]
pub struct Args {
    /// The release's version: v1.6.3, v1.7.0-rc.1.
    #[arg(required_unless_present = "refresh")]
    pub version: Option<String>,
    /// A Cozystack source tree (a checkout of cozystack/cozystack at the
    /// release's tag), or a folder of the reference data (DATA/<folder>).
    #[arg(long, required_unless_present = "refresh")]
    pub from: Option<PathBuf>,
    /// A release candidate: the policies accept it, but it is never their
    /// default, nor in the chart's list or `make oracle`'s releases.
    #[arg(long)]
    pub candidate: bool,
    /// Where the tree came from, for the release file
    /// (`cozystack/cozystack tag v1.6.3 (<commit>)`).
    #[arg(long)]
    pub source: Option<String>,
    /// Compare with this release instead of the newest older one.
    #[arg(long)]
    pub previous: Option<String>,
    /// The reference data: a source tree is written into DATA/cozystack-<version>.
    #[arg(long, default_value = releases::DATA_DIR)]
    pub data: PathBuf,
    /// Leave values-schema's table of nulls as it is (computing it renders
    /// every chart with Helm's SDK, tools/helm-venv, for some minutes).
    #[arg(long)]
    pub no_nulls: bool,
    /// Import nothing: write the tables of releases, values-schema's
    /// schemas and rules and the chart again from releases/*.json.
    #[arg(long, conflicts_with_all = ["version", "from", "candidate"])]
    pub refresh: bool,
}

pub fn run(root: &Path, args: Args) -> Result<ExitCode> {
    let data = layout::resolve(root, &args.data);
    let mut report = None;
    let mut nulls = None;
    if let (Some(version), Some(from)) = (&args.version, &args.from) {
        let from = layout::resolve(root, from);
        let imported = import(&Request {
            root,
            data: &data,
            version,
            from: &from,
            candidate: args.candidate,
            source: args
                .source
                .clone()
                .unwrap_or_else(|| format!("{}", from.display())),
            previous: args.previous.as_deref(),
        })
        .map_err(anyhow::Error::msg)?;
        for path in &imported.wrote {
            println!("wrote {}", path.display());
        }
        if imported.entry.same_charts_as.is_none() && !args.no_nulls {
            nulls = Some(version.clone());
        }
        report = Some(imported.report);
    } else {
        let entries = releases::read_all(root).map_err(anyhow::Error::msg)?;
        for path in write_table(root, &entries).map_err(anyhow::Error::msg)? {
            println!("wrote {}", path.display());
        }
    }
    if let Some(version) = nulls {
        // The table of nulls that fail a render: the oracle renders the
        // release's charts with Helm.
        run_tool(
            root,
            Command::new(root.join("tools/oracle"))
                .args(["--data", &data.to_string_lossy(), "nulls", "--release", &version]),
        )?;
    }
    let schemas = root.join("policies/values-schema/schemas");
    let bytes = values_schema_generator::write(root, &data, &schemas).map_err(anyhow::Error::msg)?;
    println!("wrote {} ({bytes} bytes)", schemas.display());
    for path in metadata::write(root).map_err(anyhow::Error::msg)? {
        println!("wrote {}", path.display());
    }
    // The chart's files follow from the table and the metadata just
    // written, which the next build of xtask embeds.
    run_tool(
        root,
        Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
            .args(["xtask", "chart"]),
    )?;
    if let Some(report) = report {
        print!("\n{report}");
    }
    println!(
        "\nNext: `make dist`, then `make oracle ORACLE_RELEASES={}` (docs/releases.md).",
        args.version.as_deref().unwrap_or("<version>")
    );
    Ok(ExitCode::SUCCESS)
}

/// Runs `command` in `root`, failing when it does.
fn run_tool(root: &Path, command: &mut Command) -> Result<()> {
    let shown = format!("{command:?}");
    let status = command
        .current_dir(root)
        .status()
        .with_context(|| format!("cannot run {shown}"))?;
    if !status.success() {
        bail!("{shown} failed ({status})");
    }
    Ok(())
}
