//! The labels that mark this service's containers and images, so it finds them again after a
//! restart.

pub const LABEL_MANAGED: &str = "org.sandboxd.managed";
pub const LABEL_INSTANCE: &str = "org.sandboxd.instance";
pub const LABEL_SESSION: &str = "org.sandboxd.session";
pub const LABEL_RUNTIME: &str = "org.sandboxd.runtime";

/// Every recipe build (an image) carries the recipe's name and the hash of its content.
pub const LABEL_RECIPE: &str = "org.sandboxd.recipe";
pub const LABEL_RECIPE_HASH: &str = "org.sandboxd.recipe-hash";
