pub mod ledger;
pub mod testnet;
