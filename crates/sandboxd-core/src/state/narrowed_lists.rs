//! The egress lists sessions narrowed below their runtime's: leaf state the core's egress
//! operations use.

use sandboxd_api::EgressRule;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

#[derive(Default)]
pub(crate) struct NarrowedLists {
    by_session: RwLock<HashMap<String, Arc<[EgressRule]>>>,
}

impl NarrowedLists {
    pub fn get(&self, session_id: &str) -> Option<Arc<[EgressRule]>> {
        self.by_session
            .read()
            .expect("egress lists lock")
            .get(session_id)
            .cloned()
    }

    pub fn set(&self, session_id: &str, rules: Arc<[EgressRule]>) {
        self.by_session
            .write()
            .expect("egress lists lock")
            .insert(session_id.to_string(), rules);
    }

    pub fn remove(&self, session_id: &str) {
        self.by_session
            .write()
            .expect("egress lists lock")
            .remove(session_id);
    }
}
