pub mod testnet;
