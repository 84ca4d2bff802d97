//! The bundle a command runs: its modules, from where the user says
//! ([`source`], [`Modules`]), each with its settings ([`settings`]), compiled
//! once and kept between runs ([`compile_cache`]), and every change of a
//! set of manifests evaluated with every policy whose rules match it, as a
//! cluster would admit them, into findings at the place of their field.

pub mod compile_cache;
pub mod settings;
pub mod source;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use admission::Operation;
use anyhow::{Context, Result};
use capabilities::snapshot::Reads;
use host::{
    AdmissionRequest, AdmissionResponse, HostCapabilities, Policy, PolicyModule, WarmInstance,
};
use rayon::prelude::*;
use release::Release;
use serde_json::Value;
use shared::FieldPath;
use wasm_meta::metadata::URL_ANNOTATION;

use crate::finding::{Answered, CHECK, Finding, Location, Object, RuleId};
use crate::manifests::{Change, Manifest};

/// Where the modules come from and their settings (`check`, `preflight`,
/// `snapshot-command`).
#[derive(clap::Args)]
pub struct Modules {
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

impl Modules {
    /// The bundle these flags name, with its settings.
    pub fn bundle(&self, root: &Path) -> Result<Bundle> {
        if !self.no_compile_cache {
            compile_cache::enable();
        }
        let modules = self.load(root)?;
        let settings = settings::collect(root, &self.from_deploy, &self.settings)?;
        Ok(Bundle::new(modules, settings))
    }

    /// The modules these flags name, without their settings.
    pub fn load(&self, root: &Path) -> Result<Vec<PolicyModule>> {
        source::load(&source::Request {
            policies: &self.policy,
            dist: self
                .dist
                .as_ref()
                .map(|d| layout::resolve(root, d))
                .as_deref(),
            root,
        })
    }
}

/// Loaded modules with their settings validated.
pub struct Bundle {
    modules: Vec<PolicyModule>,
    settings: BTreeMap<String, Value>,
}

/// The setting that selects the Cozystack release a policy judges for.
const VERSION_SETTING: &str = "cozystackVersion";

/// The setting that raises a policy's warnings to denials, by rule id.
const DENY_SETTING: &str = "deny";

impl Bundle {
    /// The bundle of compiled modules (see `bundle_source` for where they
    /// come from) with each policy's settings.
    pub fn new(modules: Vec<PolicyModule>, settings: BTreeMap<String, Value>) -> Self {
        Self { modules, settings }
    }

    /// The policies audit-scanner would run (`backgroundAudit: true`).
    pub fn audited(mut self) -> Self {
        self.modules
            .retain(|m| m.metadata().is_none_or(|m| m.background_audit));
        self
    }

    /// `policies` judge as on `release` where their settings take
    /// `cozystackVersion` and do not set it (a module that refuses the
    /// setting keeps its settings).
    pub fn at_release(self, policies: &[&str], release: Release) -> Self {
        self.with_version(Some(policies), release.as_str())
    }

    /// Every policy that takes `cozystackVersion` and does not set it judges
    /// by the release the cluster records, and values-schema by the
    /// cluster's ApplicationDefinitions (`cozystackVersion: cluster`): what
    /// a snapshot answers.
    pub fn at_cluster_release(self) -> Self {
        self.with_version(None, release::FROM_CLUSTER)
    }

    /// `cozystackVersion: version` for `policies` (every policy when
    /// `None`) whose settings take it and do not set it.
    fn with_version(mut self, policies: Option<&[&str]>, version: &str) -> Self {
        for module in self
            .modules
            .iter()
            .filter(|m| policies.is_none_or(|p| p.contains(&m.name())))
        {
            let mut settings = match self.settings.get(module.name()) {
                Some(Value::Object(settings)) => settings.clone(),
                Some(_) => continue,
                None => serde_json::Map::new(),
            };
            if settings.contains_key(VERSION_SETTING) {
                continue;
            }
            settings.insert(VERSION_SETTING.into(), version.into());
            let settings = Value::Object(settings);
            if module.configure(settings.clone()).is_ok() {
                self.settings.insert(module.name().to_owned(), settings);
            }
        }
        self
    }

    /// `policy` denies what rules `rules` only warn about, where its
    /// settings take a `deny` list and do not set one (a module that
    /// refuses the setting keeps its settings).
    pub fn raising(mut self, policy: &str, rules: &[&str]) -> Self {
        let Some(module) = self.modules.iter().find(|m| m.name() == policy) else {
            return self;
        };
        let mut settings = match self.settings.get(policy) {
            Some(Value::Object(settings)) => settings.clone(),
            Some(_) => return self,
            None => serde_json::Map::new(),
        };
        if settings.contains_key(DENY_SETTING) {
            return self;
        }
        settings.insert(DENY_SETTING.into(), rules.into());
        let settings = Value::Object(settings);
        if module.configure(settings.clone()).is_ok() {
            self.settings.insert(policy.to_owned(), settings);
        }
        self
    }

    fn policies(&self) -> Result<Vec<Policy<'_>>> {
        self.modules
            .iter()
            .map(|module| {
                let settings = self
                    .settings
                    .get(module.name())
                    .cloned()
                    .unwrap_or(Value::Null);
                module
                    .configure(settings)
                    .with_context(|| format!("policy {}", module.name()))
            })
            .collect()
    }

    /// Whether a policy of the bundle judges `request`.
    pub fn judges(&self, request: &AdmissionRequest) -> bool {
        self.modules
            .iter()
            .any(|module| module.metadata().is_none_or(|m| m.matches(request)))
    }

    /// What the bundle's policies read of a cluster, as their metadata
    /// declares it.
    pub fn reads(&self) -> Result<Reads> {
        Reads::of(self.modules.iter().filter_map(PolicyModule::metadata))
            .map_err(anyhow::Error::msg)
    }

    /// The home page of the module called `policy`, whose README documents
    /// its rules ([`crate::finding::RuleId::url`]), from its metadata.
    pub fn home(&self, policy: &str) -> Option<&str> {
        self.modules
            .iter()
            .find(|m| m.name() == policy)
            .and_then(|m| m.metadata())
            .and_then(|m| m.annotations.get(URL_ANNOTATION))
            .map(String::as_str)
    }

    /// Evaluates every change with every policy whose rules match it,
    /// cluster reads answered as `capabilities` says.
    ///
    /// The evaluations run on every core, each in its own fresh instance;
    /// the findings are gathered in the order of the changes and policies
    /// (unresolved placeholders first, which `run`'s sort puts in place),
    /// so the output does not depend on the scheduling.
    pub fn evaluate(
        &self,
        changes: &[Change],
        capabilities: &HostCapabilities,
    ) -> Result<Evaluation> {
        let policies = self.policies()?;
        let mut evaluation = Evaluation::default();
        let mut jobs = Vec::new();
        for change in changes {
            if let Some(unresolved) = unresolved(change) {
                evaluation.findings.extend(unresolved);
                continue;
            }
            let before = jobs.len();
            jobs.extend(
                policies
                    .iter()
                    .enumerate()
                    .filter(|(_, policy)| {
                        policy
                            .module()
                            .metadata()
                            .is_none_or(|m| m.matches(&change.request))
                    })
                    .map(|(index, _)| (change, index)),
            );
            if jobs.len() == before {
                evaluation.unmatched += 1;
            }
        }
        // A change holds its positions behind `Rc`s, which stay on this
        // thread; the evaluations need only the requests.
        let requests: Vec<(&AdmissionRequest, usize)> = jobs
            .iter()
            .map(|(change, index)| (&change.request, *index))
            .collect();
        let responses: Vec<AdmissionResponse> = requests
            .par_iter()
            .map_init(
                || Instances::new(policies.len(), capabilities.clone()),
                |instances, (request, index)| instances.evaluate(&policies, *index, request),
            )
            .collect();
        for ((change, index), response) in jobs.iter().zip(&responses) {
            let module = policies.get(*index).map(Policy::module);
            if let Some(module) = module {
                evaluation
                    .findings
                    .extend(findings(change, module, response));
            }
        }
        Ok(evaluation)
    }
}

/// One thread's kept instances, one per policy, made on first use.
///
/// A fresh instance per evaluation, as policy-server makes, costs several
/// times the rule itself; the policies keep no state between calls, so a
/// kept instance answers the same (the host's case test proves it).
struct Instances {
    kept: Vec<Option<WarmInstance>>,
    capabilities: HostCapabilities,
}

impl Instances {
    fn new(policies: usize, capabilities: HostCapabilities) -> Self {
        Self {
            kept: std::iter::repeat_with(|| None).take(policies).collect(),
            capabilities,
        }
    }

    /// The answer of policy `index`: from the kept instance, else (none
    /// could be made, or its call failed and it may be broken) from a fresh
    /// one, which gives the answer policy-server would.
    fn evaluate(
        &mut self,
        policies: &[Policy<'_>],
        index: usize,
        request: &AdmissionRequest,
    ) -> AdmissionResponse {
        let Some(policy) = policies.get(index) else {
            return AdmissionResponse::internal_server_error(&request.uid, "no such policy");
        };
        if let Some(slot) = self.kept.get_mut(index) {
            if slot.is_none() {
                *slot = policy.warm_instance(self.capabilities.clone()).ok();
            }
            if let Some(instance) = slot {
                match policy.evaluate_warm(instance, request) {
                    Ok(response) => return response,
                    Err(_) => *slot = None,
                }
            }
        }
        policy.evaluate(request, self.capabilities.clone()).response
    }
}

/// A finding of a module on a change, at the place of its field.
fn located(
    change: &Change,
    rule: RuleId,
    deployed_as: &str,
    answered: Answered,
    field: &FieldPath,
    message: String,
) -> Finding {
    let position = change.manifest.locate(field);
    Finding {
        ours: registry::names().any(|name| name == rule.policy),
        rule,
        deployed_as: deployed_as.to_owned(),
        answered,
        object: Object {
            api_version: change.key.api_version(),
            kind: change.key.kind.clone(),
            namespace: change.key.namespace.clone(),
            name: change.key.name.clone(),
        },
        field: field.to_string(),
        message,
        severity: String::new(),
        category: String::new(),
        fix: String::new(),
        location: Some(Location {
            file: change.manifest.file.clone(),
            line: position.line,
            column: position.column,
        }),
        operation: Some(change.operation),
        code: None,
        standing: None,
    }
}

/// The findings of one policy's response on one change: a line without a
/// tag (a module built before every rule carried one) is the policy's
/// unknown rule, so older bundles still check.
fn findings(change: &Change, module: &PolicyModule, response: &AdmissionResponse) -> Vec<Finding> {
    let finding = |answered, line: &str| {
        let parsed = shared::Finding::parse_line(line);
        let rule = parsed
            .tag
            .map_or_else(|| RuleId::unknown(module.name()), RuleId::from);
        let mut finding = located(
            change,
            rule,
            module.name(),
            answered,
            &parsed.path,
            parsed.message,
        );
        if answered == Answered::Violation {
            finding.code = response.code();
        }
        finding
    };
    let mut findings = Vec::new();
    if !response.allowed {
        findings.extend(
            response
                .message()
                .unwrap_or("rejected without a message")
                .lines()
                .map(|line| finding(Answered::Violation, line)),
        );
    }
    findings.extend(
        response
            .warnings()
            .iter()
            .map(|warning| finding(Answered::Warning, warning)),
    );
    findings
}

/// The rule of `check`'s own finding about a placeholder without a value.
const UNRESOLVED_VARIABLE: &str = "unresolved-variable";

/// Findings for the fields of a written object that still hold a
/// placeholder: such an object is not judged, as its literal `${VAR}`
/// is not what Flux would apply.
fn unresolved(change: &Change) -> Option<Vec<Finding>> {
    let manifest: &Manifest = &change.manifest;
    if change.operation == Operation::Delete || manifest.unresolved.is_empty() {
        return None;
    }
    Some(
        manifest
            .unresolved
            .iter()
            .map(|(field, names)| {
                let names = names
                    .iter()
                    .map(|n| format!("${{{n}}}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                located(
                    change,
                    RuleId::new(CHECK, UNRESOLVED_VARIABLE),
                    CHECK,
                    Answered::Warning,
                    field,
                    format!(
                        "{names} has no value, so the object was not judged: give it with --var or --vars-from, or a default (${{VAR:=default}})"
                    ),
                )
            })
            .collect(),
    )
}

/// Findings, and objects no policy looked at.
#[derive(Debug, Default)]
pub struct Evaluation {
    pub findings: Vec<Finding>,
    pub unmatched: usize,
}
