//! `cozystack-policies`: checks manifests against the policy bundle, and
//! builds, benchmarks and publishes the bundle's modules.

mod artifacthub;
mod bench;
mod bench_hostile;
mod bench_server;
mod bundle_source;
mod case_export;
mod chart;
mod check;
mod compile_cache;
mod deploy;
mod dist;
mod manifests;
mod preflight;
mod push;
mod registry_auth;
mod registry_source;
mod report;
mod settings_source;
mod sign;
mod workspace;

use reading::yaml::{self, Limit};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

use crate::workspace::PolicyCrate;

#[derive(Parser)]
#[command(version, about)]
struct Cli {
    /// The repository root (policies/, dist/).
    #[arg(long, global = true, default_value = ".")]
    root: PathBuf,
    #[command(subcommand)]
    command: Command,
}

/// What `--help` lists is what a user runs: check, preflight,
/// snapshot-command, report and push. The commands only the team runs
/// (building dist/, the benchmarks, the generated files, the kwctl suite's
/// helpers) are hidden from it and still run; the README's "Development"
/// section names them.
#[derive(Subcommand)]
enum Command {
    /// Evaluate the whole bundle against Kubernetes manifests and print every
    /// violation; exits 1 when there is one.
    ///
    /// With one tree every object is a CREATE (as audit-scanner sees live
    /// objects). With --old, objects only in the new tree are CREATE, changed
    /// ones UPDATE, objects only in the old tree DELETE.
    Check {
        /// Manifest files or directories after the change (`-`: standard
        /// input).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Manifests before the change: a directory, or a git revision
        /// (`origin/main`) whose tree is read at the same paths.
        #[arg(long)]
        old: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: check::Format,
        /// Same as --format json.
        #[arg(long, conflicts_with = "format")]
        json: bool,
        /// Which findings fail the check (exit 1).
        #[arg(long, value_enum, default_value = "violation")]
        fail_on: check::FailOn,
        /// Refuse documents that are not Kubernetes objects instead of
        /// skipping them.
        #[arg(long)]
        strict: bool,
        /// A value for a Flux `${VAR}` placeholder; repeatable.
        #[arg(long = "var", value_name = "KEY=VALUE")]
        vars: Vec<String>,
        /// Placeholder values from KEY=VALUE lines or a ConfigMap/Secret
        /// manifest; repeatable.
        #[arg(long, value_name = "FILE")]
        vars_from: Vec<PathBuf>,
        /// Fail only on findings this file (from --write-baseline) lacks.
        #[arg(long, value_name = "FILE")]
        baseline: Option<PathBuf>,
        /// Write every finding to FILE as a baseline, and exit 0.
        #[arg(long, value_name = "FILE")]
        write_baseline: Option<PathBuf>,
        #[command(flatten)]
        modules: Modules,
        /// A snapshot of the cluster: files or directories of `kubectl get
        /// … -o json|yaml` output (Lists or objects; `snapshot-command`
        /// prints the command), repeatable. The policies' cluster reads are
        /// answered from its objects, as policy-server answers them from the
        /// live cluster; without it, context-aware checks keep their static
        /// verdict and say so.
        #[arg(long, value_name = "SNAPSHOT")]
        cluster: Vec<PathBuf>,
        /// Print the Cozystack 1.6 upgrade checklist of the findings (text
        /// or json) instead of the findings alone.
        #[arg(long, requires = "cluster")]
        checklist: bool,
    },
    /// The Cozystack 1.6 upgrade checklist of a cluster snapshot: every
    /// object of it judged as audit-scanner would (a CREATE, through the
    /// policies with background audit), the policies' cluster reads
    /// answered from it, and the findings sorted into the release notes'
    /// checks: pass, fail, warn, not checked, not applicable or by hand.
    ///
    /// The same as `check --cluster SNAPSHOT --checklist SNAPSHOT` with
    /// those policies; exits 1 when a check fails.
    Preflight {
        /// The snapshot (`snapshot-command` prints the command).
        #[arg(required = true)]
        snapshot: Vec<PathBuf>,
        /// `json` is what `report` renders (HTML included).
        #[arg(long, value_enum, default_value = "text")]
        format: PreflightFormat,
        #[command(flatten)]
        modules: Modules,
    },
    /// Print the shell block that captures a cluster snapshot for
    /// `preflight` and `check --cluster`: one `kubectl get` of the kinds the
    /// bundle's policies read and its checklist judges, Secrets by name and
    /// without their data.
    #[command(name = "snapshot-command")]
    Snapshot {
        #[command(flatten)]
        modules: Modules,
    },
    /// One report of policy findings from PolicyReports, OpenReports or
    /// `check --json` output: totals, every finding with its rule and fix,
    /// and what changed since a previous report.
    ///
    /// Only this bundle's findings unless --all-policies: a finding is ours
    /// when its message starts with a `[policy/rule]` tag naming one of our
    /// policies, or, untagged, when the deployed policy has one of our names.
    Report(report::Args),
    /// Annotate cargo's wasm artifacts into dist/<policy>.wasm.
    #[command(hide = true)]
    Dist {
        /// Where cargo wrote the wasm artifacts.
        #[arg(long, default_value = "target/wasm32-wasip1/policy")]
        wasm_dir: PathBuf,
        #[arg(long, default_value = "dist")]
        out: PathBuf,
        /// Only these policies (all by default).
        policies: Vec<String>,
    },
    /// Median evaluation time of each module next to the accept-all floor.
    #[command(hide = true)]
    Bench {
        #[arg(long, default_value_t = 2000)]
        rounds: usize,
        #[arg(long, default_value = "dist")]
        dist: PathBuf,
        /// The floor module, built with the policies' profile.
        #[arg(
            long,
            default_value = "target/wasm32-wasip1/policy-opt/floor_policy.wasm"
        )]
        floor: PathBuf,
        /// Evaluations of each hostile case whose median is reported
        /// after the table.
        #[arg(long, default_value_t = 5)]
        hostile_runs: usize,
        /// Start every timed call from cold caches, as in policy-server;
        /// the hostile cases are skipped.
        #[arg(long)]
        cold: bool,
        /// Only these policies.
        policies: Vec<String>,
    },
    /// Throughput and latency through Kubewarden's own policy-server, each
    /// policy next to the accept-all floor and the reading floor, under load
    /// from `hey`.
    #[command(hide = true)]
    BenchServer {
        /// Seconds of load per module and round.
        #[arg(long, default_value_t = 2.5)]
        seconds: f64,
        /// Rounds: more and shorter rounds make the paired ratio steadier
        /// on a machine whose speed drifts. The budget is judged on the
        /// median of at least 8.
        #[arg(long, default_value_t = 8)]
        rounds: usize,
        /// Concurrent connections.
        #[arg(long, default_value_t = 8)]
        concurrency: usize,
        #[arg(long, default_value = "dist")]
        dist: PathBuf,
        /// The floor module, built with the policies' profile.
        #[arg(
            long,
            default_value = "target/wasm32-wasip1/policy-opt/floor_policy.wasm"
        )]
        floor: PathBuf,
        /// The reading floor: reads the request as every policy does and
        /// accepts, so that each policy's ratio splits into what the shared
        /// reading costs and what its rule costs.
        #[arg(
            long,
            default_value = "target/wasm32-wasip1/policy-opt/reading_floor.wasm"
        )]
        reading_floor: PathBuf,
        /// A Sigstore trust configuration for policy-server (offline start).
        #[arg(long, env = "SIGSTORE_TRUST_CONFIG")]
        sigstore_trust_config: Option<PathBuf>,
        /// Only these policies.
        policies: Vec<String>,
    },
    /// Push annotated modules to an OCI registry as `kwctl push` does and
    /// print the immutable digest reference of each.
    ///
    /// Every module in --dist (or the ones named) goes to its metadata's
    /// `io.kubewarden.policy.ociUrl`, tagged `v<version>`; with --registry
    /// to `<registry>/<last segment of ociUrl>` instead. Registries on the
    /// loopback interface are spoken to over plain HTTP, all others over
    /// TLS. Unannotated modules are refused before anything is pushed.
    Push {
        #[arg(long, default_value = "dist")]
        dist: PathBuf,
        /// Registry and namespace replacing the metadata's, e.g.
        /// `127.0.0.1:5000/cozystack-policies`.
        #[arg(long)]
        registry: Option<String>,
        /// User for the registry (the password is read from standard input).
        #[arg(long, requires = "password_stdin")]
        username: Option<String>,
        /// Read the registry password or token from standard input.
        #[arg(long, requires = "username")]
        password_stdin: bool,
        /// Print one JSON object per module (`immutable_ref` as `kwctl push
        /// -o json`), instead of text.
        #[arg(long)]
        json: bool,
        /// The chart archive (`make chart-package`) to push after the
        /// modules, to `<registry>/charts/<name>:<version>`.
        #[arg(long, value_name = "ARCHIVE")]
        chart: Option<PathBuf>,
        /// Sign every module and the chart with this unencrypted PEM P-256
        /// private key (cosign's simple signing, verified by `kwctl verify
        /// -k` and policy-server's `pubKey` verification).
        #[arg(long, value_name = "KEY")]
        sign_key: Option<PathBuf>,
        /// Push the chart only, no module.
        #[arg(long, requires = "chart")]
        chart_only: bool,
        /// Policy names or module paths (every module in --dist by default).
        modules: Vec<String>,
    },
    /// Write the ArtifactHub package of each policy (artifacthub-pkg.yml and
    /// README.md under artifacthub/<policy>/), generated from its metadata.
    #[command(hide = true)]
    Artifacthub {
        #[arg(long, default_value = "artifacthub")]
        out: PathBuf,
        /// Write nothing; exit 1 when a committed file differs.
        #[arg(long)]
        check: bool,
    },
    /// Write the chart's files that follow from the policies
    /// (charts/cozystack-policies/files/policies.yaml from each metadata.yml,
    /// values.schema.json from each settings type).
    #[command(hide = true)]
    Chart {
        /// Write nothing; exit 1 when a committed file differs.
        #[arg(long)]
        check: bool,
    },
    /// Print a starting ClusterAdmissionPolicy for a policy (from its
    /// metadata), the shape of its template in
    /// charts/cozystack-policies/templates/policies/<policy>.yaml.
    #[command(hide = true)]
    ScaffoldDeploy { policy: String },
    /// Split a case file into the files `kwctl run` takes, to run it by hand.
    #[command(hide = true)]
    CaseFiles {
        case: PathBuf,
        out: PathBuf,
        /// Whose expectation to write: host, kwctl or policy-server.
        #[arg(long, default_value = "kwctl")]
        runner: bundle::case::Runner,
    },
    /// Evaluate one request with one module through the host, with the flags
    /// and output of `kwctl run`: a case run by hand where kwctl is not
    /// installed.
    #[command(hide = true)]
    Run {
        /// The annotated module.
        module: PathBuf,
        #[arg(short = 'r', long)]
        request_path: PathBuf,
        #[arg(long)]
        settings_path: Option<PathBuf>,
        #[arg(long)]
        settings_json: Option<String>,
        #[arg(long)]
        replay_host_capabilities_interactions: Option<PathBuf>,
        /// Accepted for compatibility: the module's contextAwareResources
        /// are always the allow-list.
        #[arg(long)]
        allow_context_aware: bool,
        /// Compile the module afresh instead of taking it from the cache of
        /// compiled modules (kwctl's flag, and as kwctl, cached by default).
        #[arg(long)]
        disable_wasmtime_cache: bool,
    },
}

/// Where the modules come from and their settings (`check`, `preflight`).
#[derive(clap::Args)]
struct Modules {
    /// Policy settings: a YAML or JSON file mapping policy names to
    /// their settings, or POLICY=FILE for one policy; repeatable, later
    /// ones win.
    #[arg(long = "settings", value_name = "FILE|POLICY=FILE")]
    settings: Vec<String>,
    /// ClusterAdmissionPolicy and AdmissionPolicy manifests (a file or a
    /// directory, like deploy/): each policy gets the `spec.settings` of
    /// the manifest whose module names it; repeatable.
    #[arg(long, value_name = "PATH")]
    from_deploy: Vec<PathBuf>,
    /// The modules to check with instead of the bundle: a module file, a
    /// directory of modules, or registry://host/repo:tag[@sha256:…]
    /// (pulled and cached by digest); repeatable.
    #[arg(long, value_name = "MODULE")]
    policy: Vec<String>,
    /// Directory of the annotated modules: in a clone, it must hold every
    /// policy of the workspace; elsewhere, every .wasm in it is used.
    /// Without it (and without --policy) the modules embedded at build
    /// time are used, else dist/ of the clone.
    #[arg(long)]
    dist: Option<PathBuf>,
    /// Compile the modules afresh and keep nothing: by default compiled
    /// modules are kept in $XDG_CACHE_HOME/cozystack-policies/compiled
    /// (else ~/.cache/...), keyed by the module's bytes, so later runs
    /// skip compiling. The environment variable turns it on with any
    /// value but empty, 0, false, no or off.
    #[arg(
            long,
            env = "COZYSTACK_POLICIES_NO_COMPILE_CACHE",
            value_parser = clap::builder::FalseyValueParser::new()
        )]
    no_compile_cache: bool,
}

/// Output of `preflight`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum PreflightFormat {
    Text,
    Json,
}

impl Modules {
    /// The bundle these flags name, with its settings.
    fn bundle(&self, root: &Path) -> Result<check::Bundle> {
        if !self.no_compile_cache {
            compile_cache::enable();
        }
        let modules = self.load(root)?;
        let settings = settings_source::collect(root, &self.from_deploy, &self.settings)?;
        Ok(check::Bundle::new(modules, settings))
    }

    fn load(&self, root: &Path) -> Result<Vec<host::PolicyModule>> {
        bundle_source::load(&bundle_source::Request {
            policies: &self.policy,
            dist: self.dist.as_ref().map(|d| resolve(root, d)).as_deref(),
            root,
        })
    }
}

/// `path` under `root`; as given when it is absolute or `root` is the
/// working directory, so output names files as the user wrote them.
fn resolve(root: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() || root == Path::new(".") {
        path.to_owned()
    } else {
        root.join(path)
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    let root = &cli.root;
    match cli.command {
        Command::Check {
            paths,
            old,
            format,
            json,
            fail_on,
            strict,
            vars,
            vars_from,
            baseline,
            write_baseline,
            modules,
            cluster,
            checklist,
        } => {
            let mut bundle = modules.bundle(root)?;
            if checklist {
                bundle = bundle.at_release(preflight::BEFORE_THE_UPGRADE, shared::Release::V1_5_4);
            }
            let paths: Vec<PathBuf> = paths
                .iter()
                .map(|p| {
                    if p == Path::new("-") {
                        p.clone()
                    } else {
                        resolve(root, p)
                    }
                })
                .collect();
            let vars_from: Vec<PathBuf> = vars_from.iter().map(|p| resolve(root, p)).collect();
            let vars_from: Vec<&Path> = vars_from.iter().map(PathBuf::as_path).collect();
            let options = check::Options {
                old: old
                    .map(|o| check::old(&o, &resolve(root, Path::new(&o)), &paths))
                    .transpose()?,
                paths,
                strict,
                vars: check::vars::Vars::load(&vars, &vars_from)?,
                format: if json { check::Format::Json } else { format },
                fail_on,
                baseline: baseline.map(|p| resolve(root, &p)),
                write_baseline: write_baseline.map(|p| resolve(root, &p)),
                cluster: snapshot(root, &cluster)?,
                checklist,
            };
            let failed = check::run(&options, &bundle)?;
            Ok(if failed {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Preflight {
            snapshot: paths,
            format,
            modules,
        } => {
            let bundle = modules
                .bundle(root)?
                .audited()
                .at_release(preflight::BEFORE_THE_UPGRADE, shared::Release::V1_5_4);
            let cluster = snapshot(root, &paths)?;
            let options = check::Options {
                cluster,
                paths: paths.iter().map(|p| resolve(root, p)).collect(),
                old: None,
                strict: false,
                vars: check::vars::Vars::load(&[], &[])?,
                format: match format {
                    PreflightFormat::Text => check::Format::Text,
                    PreflightFormat::Json => check::Format::Json,
                },
                fail_on: check::FailOn::Violation,
                baseline: None,
                write_baseline: None,
                checklist: true,
            };
            let failed = check::run(&options, &bundle)?;
            Ok(if failed {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Snapshot { modules } => {
            print!("{}", preflight::snapshot_command(&modules.load(root)?)?);
            Ok(ExitCode::SUCCESS)
        }
        Command::Report(args) => {
            report::run(root, &args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Dist {
            wasm_dir,
            out,
            policies,
        } => {
            let (wasm_dir, out) = (resolve(root, &wasm_dir), resolve(root, &out));
            for policy in workspace::select(workspace::policies(root)?, &policies)? {
                let size = dist::annotate(&policy, &wasm_dir, &out)?;
                println!(
                    "{:<28} {:>8} bytes",
                    policy.module_path(&out).display(),
                    size
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Bench {
            rounds,
            dist,
            floor,
            hostile_runs,
            cold,
            policies,
        } => {
            let dist = resolve(root, &dist);
            let floor = resolve(root, &floor);
            let floor = host::PolicyModule::from_file(&floor)
                .with_context(|| format!("reading {}; run `make floors` first", floor.display()))?;
            let selected = workspace::select(workspace::policies(root)?, &policies)?;
            let caches = if cold {
                bench::Caches::Cold
            } else {
                bench::Caches::Warm
            };
            let measurements = selected
                .iter()
                .map(|policy| bench::measure(policy, &dist, &floor, rounds, caches))
                .collect::<Result<Vec<_>>>()?;
            print!(
                "{}",
                bench::render(&measurements, floor.size(), rounds, caches)
            );
            if !cold {
                let mut hostile = Vec::new();
                for policy in &selected {
                    hostile.extend(bench_hostile::measure(policy, &dist, hostile_runs)?);
                }
                print!("{}", bench_hostile::render(&hostile, hostile_runs));
            }
            let over: Vec<String> = measurements
                .iter()
                .flat_map(|m| m.over_budget(caches))
                .collect();
            Ok(within_budget(&over))
        }
        Command::BenchServer {
            seconds,
            rounds,
            concurrency,
            dist,
            floor,
            reading_floor,
            sigstore_trust_config,
            policies,
        } => {
            let setup = bench_server::Setup {
                policy_server: host::policy_server::find_program("policy-server")
                    .context("policy-server is not on PATH: `make setup` installs it")?,
                trust_config: sigstore_trust_config,
                dist: resolve(root, &dist),
                floor: resolve(root, &floor),
                reading_floor: resolve(root, &reading_floor),
                work: root.join("target/bench-server"),
            };
            let load = bench_server::Load {
                duration: std::time::Duration::from_secs_f64(seconds),
                rounds,
                concurrency,
            };
            let selected = workspace::select(workspace::policies(root)?, &policies)?;
            let report = bench_server::measure(&selected, &setup, &load)?;
            print!("{}", bench_server::render(&report));
            let below: Vec<String> = report
                .measurements
                .iter()
                .filter_map(bench_server::Measurement::below_budget)
                .collect();
            Ok(within_budget(&below))
        }
        Command::Run {
            module,
            request_path,
            settings_path,
            settings_json,
            replay_host_capabilities_interactions,
            allow_context_aware: _,
            disable_wasmtime_cache,
        } => {
            if !disable_wasmtime_cache {
                compile_cache::enable();
            }
            run_like_kwctl(
                &resolve(root, &module),
                &resolve(root, &request_path),
                settings_path.map(|p| resolve(root, &p)).as_deref(),
                settings_json.as_deref(),
                replay_host_capabilities_interactions
                    .map(|p| resolve(root, &p))
                    .as_deref(),
            )
        }
        Command::Push {
            dist,
            registry,
            username,
            password_stdin,
            json,
            chart,
            sign_key,
            chart_only,
            modules,
        } => {
            let auth = match username {
                Some(user) if password_stdin => {
                    let mut password = String::new();
                    std::io::stdin()
                        .read_line(&mut password)
                        .context("reading the password from standard input")?;
                    Some(oci_client::secrets::RegistryAuth::Basic(
                        user,
                        password.trim_end().to_owned(),
                    ))
                }
                // From the docker configuration, registry by registry.
                _ => None,
            };
            // Everything is read, and so checked, before anything is pushed.
            let artifacts = if chart_only {
                Vec::new()
            } else {
                push::select(&resolve(root, &dist), &modules)?
            };
            let chart = chart
                .map(|path| push::ChartArchive::load(&resolve(root, &path)))
                .transpose()?;
            let key = sign_key
                .map(|path| sign::SigningKey::from_pem_file(&resolve(root, &path)))
                .transpose()?;
            push::push_all(
                &artifacts,
                chart.as_ref(),
                registry.as_deref(),
                auth.as_ref(),
                key.as_ref(),
                |pushed| {
                    if json {
                        println!("{}", serde_json::to_string(pushed)?);
                    } else {
                        println!("{} {}", pushed.reference, pushed.immutable_ref);
                        if let Some(signature) = &pushed.signature {
                            println!("  signed: {signature}");
                        }
                    }
                    Ok(())
                },
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Artifacthub { out, check } => {
            let out = resolve(root, &out);
            let policies = workspace::policies(root)?;
            let mut drift = Vec::new();
            for policy in &policies {
                let files = artifacthub::generate(policy, &out)?;
                if check {
                    drift.extend(files.drift());
                } else if files.write()? {
                    println!("wrote {}", files.dir.display());
                }
            }
            drift.extend(artifacthub::orphans(&out, &policies)?);
            for path in &drift {
                eprintln!("out of date: {}", path.display());
            }
            Ok(if drift.is_empty() || !check {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Command::Chart { check } => {
            let generated = chart::generate(&workspace::policies(root)?)?;
            if check {
                let drift = generated.drift(root);
                for path in &drift {
                    eprintln!("out of date: {}", path.display());
                }
                return Ok(if drift.is_empty() {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(1)
                });
            }
            for path in generated.write(root)? {
                println!("wrote {}", path.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::ScaffoldDeploy { policy } => {
            let selected = workspace::select(workspace::policies(root)?, &[policy])?;
            for policy in selected {
                print!(
                    "{}",
                    serde_saphyr::to_string(&deploy::scaffold(&policy.metadata()?)?)?
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::CaseFiles { case, out, runner } => {
            case_export::export(&resolve(root, &case), &resolve(root, &out), runner)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// A benchmark's exit: a failure that names each budget broken, success
/// when none is (a figure above its budget is not a failure, however it
/// compares with the last run).
fn within_budget(broken: &[String]) -> ExitCode {
    if broken.is_empty() {
        return ExitCode::SUCCESS;
    }
    eprintln!("over budget:");
    for line in broken {
        eprintln!("  {line}");
    }
    ExitCode::FAILURE
}

/// The snapshot `--cluster` names, `None` without one.
fn snapshot(
    root: &Path,
    paths: &[PathBuf],
) -> Result<Option<std::sync::Arc<bundle::snapshot::Snapshot>>> {
    if paths.is_empty() {
        return Ok(None);
    }
    let paths: Vec<PathBuf> = paths.iter().map(|p| resolve(root, p)).collect();
    let snapshot = preflight::load_snapshot(&paths).context("reading the cluster snapshot")?;
    Ok(Some(std::sync::Arc::new(snapshot)))
}

/// `kwctl run`: prints the AdmissionResponse; refused settings exit 1 with
/// kwctl's message.
fn run_like_kwctl(
    module: &Path,
    request: &Path,
    settings_path: Option<&Path>,
    settings_json: Option<&str>,
    session: Option<&Path>,
) -> Result<ExitCode> {
    let settings = match (settings_path, settings_json) {
        (Some(path), _) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            serde_json::to_value(yaml::document::<serde_json::Value>(&text, Limit::Cases)?)?
        }
        (None, Some(json)) => serde_json::from_str(json)?,
        (None, None) => serde_json::Value::Null,
    };
    let request_text = std::fs::read_to_string(request)
        .with_context(|| format!("reading {}", request.display()))?;
    let request = host::AdmissionRequest::from_value(serde_json::from_str(&request_text)?)?;
    let capabilities = match session {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading {}", path.display()))?;
            let entries: Vec<bundle::replay::SessionEntry> = yaml::document(&text, Limit::Cases)?;
            host::HostCapabilities::Replay(bundle::replay::Session::from_entries(&entries)?)
        }
        None => host::HostCapabilities::offline(),
    };
    let module = host::PolicyModule::from_file(module)?;
    let policy = match module.configure(settings) {
        Ok(policy) => policy,
        Err(error @ host::HostError::InvalidSettings { .. }) => {
            eprintln!("{error}");
            return Ok(ExitCode::from(1));
        }
        Err(other) => return Err(other.into()),
    };
    let evaluation = policy.evaluate(&request, capabilities);
    println!("{}", serde_json::to_string(&evaluation.response)?);
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}
