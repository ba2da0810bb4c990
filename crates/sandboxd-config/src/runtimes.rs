//! A runtime of the allowlist: its image or recipe, its network and its limits, resolved and
//! checked.

use crate::description::check_description;
use crate::egress;
use crate::error::{invalid, ConfigError};
use crate::kernels;
use crate::limits::{resolve_limits, LimitsFile};
use crate::recipes::catalogue;
use crate::recipes::Recipe;
use sandboxd_api::{Limits, RuntimeInfo};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RuntimeFile {
    /// What the runtime is for, shown to agents and people; its recipe's when absent.
    description: Option<String>,
    image: Option<String>,
    /// A recipe's name (the suggested catalogue's or the config's own), built on first use.
    runtime: Option<String>,
    #[serde(default)]
    interpreter: Vec<String>,
    #[serde(default)]
    pool_size: u32,
    #[serde(default)]
    kernels: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    egress: Vec<String>,
    /// The `[secrets.NAME]` its sessions get (egress runtimes only).
    #[serde(default)]
    pub(crate) secrets: Vec<String>,
    #[serde(flatten)]
    limits: LimitsFile,
}

pub(crate) fn resolve_runtime(
    name: &str,
    file: &RuntimeFile,
    defaults: &Limits,
    recipes: &BTreeMap<String, Recipe>,
) -> Result<RuntimeInfo, ConfigError> {
    let field = format!("runtimes.{name}");
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
    {
        return Err(invalid(
            &field,
            "a runtime alias may only hold letters, digits, '-', '_' and '.'",
        ));
    }
    match (&file.image, &file.runtime) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                &field,
                "give either `image` or `runtime` (a recipe to build), not both",
            ))
        }
        (None, None) => {
            return Err(invalid(
                &field,
                "give `image` (an image on the engine) or `runtime` (a recipe to build)",
            ))
        }
        (Some(image), None) if image.trim().is_empty() => {
            return Err(invalid(format!("{field}.image"), "must not be empty"))
        }
        (None, Some(recipe)) if recipe.trim().is_empty() => {
            return Err(invalid(format!("{field}.runtime"), "must not be empty"))
        }
        _ => {}
    }
    if file.interpreter.iter().any(|arg| arg.is_empty()) {
        return Err(invalid(
            format!("{field}.interpreter"),
            "must be a program and its arguments, none of them empty",
        ));
    }
    let recipe = match &file.runtime {
        Some(recipe_name) => Some(recipes.get(recipe_name.trim()).ok_or_else(|| {
            unknown_recipe(&format!("{field}.runtime"), recipe_name.trim(), recipes)
        })?),
        None => None,
    };
    // A runtime's own settings first, then its recipe's, then the service-wide defaults.
    let inherited = recipe.map_or(defaults, |r| &r.limits);
    let interpreter = match recipe {
        Some(recipe) if file.interpreter.is_empty() => recipe.interpreter.clone(),
        _ => file.interpreter.clone(),
    };
    let kernels = match recipe {
        Some(recipe) if file.kernels.is_empty() => recipe.kernels.clone(),
        _ => kernels::resolve_kernels(&file.kernels, &field)?,
    };
    let limits = resolve_limits(&file.limits, inherited, &format!("{field}."))?;
    let description = match (&file.description, recipe) {
        (Some(own), _) => check_description(own, &format!("{field}.description"))?,
        (None, Some(recipe)) => recipe.description.clone(),
        (None, None) => String::new(),
    };
    Ok(RuntimeInfo {
        name: name.to_string(),
        description,
        image: file.image.clone(),
        recipe: recipe.map(|r| r.name.clone()),
        recipe_image: recipe.map(|r| r.image.clone()),
        egress: egress::resolve(&field, &file.egress, limits.network_mode)?,
        limits,
        interpreter,
        pool_size: file.pool_size,
        kernels,
    })
}

fn unknown_recipe(field: &str, name: &str, recipes: &BTreeMap<String, Recipe>) -> ConfigError {
    let suggested = catalogue();
    let (catalogued, own): (Vec<&String>, Vec<&String>) =
        recipes.keys().partition(|n| suggested.contains_key(*n));
    let list = |names: Vec<&String>| {
        names
            .iter()
            .map(|n| n.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut message = format!(
        "no recipe named \"{name}\"; the suggested catalogue has {} (`sandboxd runtimes suggested` shows them)",
        list(catalogued)
    );
    if !own.is_empty() {
        message.push_str(&format!(", this config defines {}", list(own)));
    }
    message.push_str(&format!(
        "; or define it under [recipes.{name}] with `base` and `steps`"
    ));
    invalid(field, message)
}
