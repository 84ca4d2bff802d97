//! A release read from a Cozystack tree into its release file, and shared's
//! table written again from all of them.

use std::path::{Path, PathBuf};

use crate::diff::{self, Side};
use crate::tree::{self, Tree, sorted_dir};
use crate::{Charts, Entry, charts_of, facts, read_all, rules, sort, table, version_key};

/// What to import.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// The repository root.
    pub root: &'a Path,
    /// The reference data folder (`../shared/data`).
    pub data: &'a Path,
    /// `v1.7.0-rc.3c780acd`.
    pub version: &'a str,
    /// A Cozystack source tree, or a folder in the data layout.
    pub from: &'a Path,
    pub candidate: bool,
    /// Where the tree came from, for the release file.
    pub source: String,
    /// The release to compare with; the newest older one when `None`.
    pub previous: Option<&'a str>,
}

/// What an import did.
#[derive(Debug)]
pub struct Imported {
    pub entry: Entry,
    /// The files it wrote.
    pub wrote: Vec<PathBuf>,
    /// What changed from the previous release.
    pub report: String,
}

/// Reads the release at `request.from` into its file, and writes shared's
/// table from every release file.
pub fn import(request: &Request<'_>) -> Result<Imported, String> {
    let Request {
        root,
        data,
        version,
        from,
        candidate,
        ..
    } = request;
    if release::line(version).is_none() {
        return Err(format!("{version:?} is not a version such as v1.7.0"));
    }
    let mut wrote = Vec::new();
    let folder = format!("cozystack-{version}");
    let tree = if tree::is_source(from) {
        let target = data.join(&folder);
        let tree = tree::from_source(from, &target)?;
        wrote.push(target);
        tree
    } else {
        Tree::at(from)?
    };
    let data_name = tree
        .root
        .strip_prefix(data)
        .ok()
        .and_then(|rest| rest.to_str())
        .filter(|rest| !rest.is_empty() && !rest.contains('/'))
        .map(str::to_owned)
        .ok_or_else(|| {
            format!(
                "{} is not a folder of the reference data {}: copy it there, or give a source tree",
                tree.root.display(),
                data.display()
            )
        })?;
    let facts = facts::read(&tree)?;
    let mut entries: Vec<Entry> = read_all(root)?
        .into_iter()
        .filter(|e| e.version != *version)
        .collect();
    let same = same_charts(&entries, data, &data_name, &facts)?;
    let system_charts = if tree.has_system_charts() {
        data_name.clone()
    } else {
        system_charts(&entries, data, version)?
    };
    let entry = Entry {
        version: (*version).to_owned(),
        candidate: *candidate,
        source: request.source.clone(),
        same_charts_as: same.clone(),
        charts: match same {
            Some(_) => None,
            None => Some(Charts {
                data: data_name,
                system_charts,
                facts: facts.clone(),
            }),
        },
    };
    let path = Entry::path(root, version);
    write(&path, &entry.to_text()?)?;
    wrote.push(path);
    entries.push(entry.clone());
    sort(&mut entries);
    wrote.extend(write_table(root, &entries)?);
    let report = compare(request, &entries, &facts, &tree)?;
    Ok(Imported {
        entry,
        wrote,
        report,
    })
}

/// Writes the tables of `entries` (the release crate's, shared's kinds);
/// their paths.
pub fn write_table(root: &Path, entries: &[Entry]) -> Result<Vec<PathBuf>, String> {
    let mut wrote = Vec::new();
    for (path, text) in table::write_all(entries)? {
        let path = root.join(path);
        write(&path, &text)?;
        wrote.push(path);
    }
    Ok(wrote)
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The release whose charts these are: one with the same data folder, or
/// with the same facts and the same files.
fn same_charts(
    entries: &[Entry],
    data: &Path,
    folder: &str,
    facts: &crate::Facts,
) -> Result<Option<String>, String> {
    for entry in entries.iter().filter(|e| e.charts.is_some()) {
        let charts = charts_of(entries, &entry.version)?;
        if charts.data == folder
            || (charts.facts == *facts && same_files(&data.join(&charts.data), &data.join(folder))?)
        {
            return Ok(Some(entry.version.clone()));
        }
    }
    Ok(None)
}

/// Whether two data folders hold the same application files and charts.
fn same_files(a: &Path, b: &Path) -> Result<bool, String> {
    for sub in [
        "apps",
        "application-definitions",
        "charts/apps",
        "charts/extra",
        "charts/library",
    ] {
        if !same_tree(&a.join(sub), &b.join(sub))? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn same_tree(a: &Path, b: &Path) -> Result<bool, String> {
    if a.is_dir() != b.is_dir() {
        return Ok(false);
    }
    if !a.is_dir() {
        return Ok(std::fs::read(a).ok() == std::fs::read(b).ok());
    }
    let names = |dir: &Path| -> Result<Vec<std::ffi::OsString>, String> {
        Ok(sorted_dir(dir)?
            .iter()
            .filter_map(|p| p.file_name().map(ToOwned::to_owned))
            .collect())
    };
    let (left, right) = (names(a)?, names(b)?);
    if left != right {
        return Ok(false);
    }
    for name in left {
        if !same_tree(&a.join(&name), &b.join(&name))? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The data folder whose system charts render the nested releases of
/// `version`, whose own data has none: the newest release of its line
/// that has them.
fn system_charts(entries: &[Entry], data: &Path, version: &str) -> Result<String, String> {
    let line = release::line(version);
    for entry in entries {
        let charts = charts_of(entries, &entry.version)?;
        if release::line(&entry.version) == line
            && Tree::at(&data.join(&charts.data)).is_ok_and(|t| t.has_system_charts())
        {
            return Ok(charts.data.clone());
        }
    }
    Err(format!(
        "the tree of {version} has no charts/system/, and no release of its line has them to render its nested releases"
    ))
}

/// What changed from the previous release.
fn compare(
    request: &Request<'_>,
    entries: &[Entry],
    facts: &crate::Facts,
    tree: &Tree,
) -> Result<String, String> {
    let previous = match request.previous {
        Some(previous) => previous.to_owned(),
        None => match entries
            .iter()
            .filter(|e| !e.candidate && version_key(&e.version) < version_key(request.version))
            .map(|e| e.version.clone())
            .next()
        {
            Some(previous) => previous,
            None => {
                return Ok(format!(
                    "{}: no earlier release to compare with\n",
                    request.version
                ));
            }
        },
    };
    let old = charts_of(entries, &previous)?;
    let old_fields = diff::read_fields(&request.data.join(&old.data), &old.facts)?;
    let new_fields = diff::kind_fields(tree, facts)?;
    let rules = rules::read_all(request.root)?;
    Ok(diff::report(
        &Side {
            version: &previous,
            facts: &old.facts,
            fields: &old_fields,
        },
        &Side {
            version: request.version,
            facts,
            fields: &new_fields,
        },
        &rules,
    ))
}
