// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Script, console} from "./utils/Script.sol";
import {IRiskGate} from "../contracts/src/interfaces/IRiskGate.sol";
import {IMarketFactory} from "../contracts/src/interfaces/IMarketFactory.sol";
import {RiskGate} from "../contracts/src/RiskGate.sol";
import {MarketFactory} from "../contracts/src/venue/MarketFactory.sol";
import {TestCollateral} from "../contracts/src/venue/TestCollateral.sol";

/// @title Deploy
/// @notice Deploys the collateral, the market factory and the gate, reusing what already exists.
/// Everything comes from the environment; no secret is ever a flag or a file:
/// - signer: `DEPLOYER_PRIVATE_KEY` if set, otherwise forge's own `--account <keystore>` (or
///   `--ledger`, ...) with `--sender`;
/// - `COLLATERAL`, `MARKET_FACTORY`: existing addresses to reuse (a factory alone implies its
///   collateral); unset means deploy a fresh TestCollateral / MarketFactory;
/// - `KEEPER_ADDRESS`: the gate's keeper, default the broadcaster;
/// - the bounds `GATE_*`, defaults below, in 6-decimal collateral units and 1e6 price units.
/// Writes `deployments/<chainId>.json` and logs the bounds read back from the deployed gate.
contract Deploy is Script {
    /// @dev 0.05: refuse to buy a token the book prices as near-impossible.
    uint256 internal constant DEFAULT_MIN_PRICE = 50_000;
    /// @dev 0.95: refuse to pay near-certainty prices (at most 0.05 upside per unit).
    uint256 internal constant DEFAULT_MAX_PRICE = 950_000;
    /// @dev 100 tUSD of payout per order, so at most 95 tUSD spent per order.
    uint256 internal constant DEFAULT_MAX_SIZE = 100e6;
    /// @dev 5 minutes left before expiry at least (the contract's floor is 120 s).
    uint256 internal constant DEFAULT_MIN_HEADROOM = 300;
    /// @dev Three markets open at once.
    uint256 internal constant DEFAULT_MAX_CONCURRENT = 3;
    /// @dev 250 tUSD at risk across all open positions.
    uint256 internal constant DEFAULT_MAX_NOTIONAL = 250e6;

    error NoCodeAt(string name, address account);
    error FactoryCollateralMismatch(address factory, address factoryCollateral, address given);
    error EnvValueTooLarge(string name, uint256 value, uint256 max);

    /// @notice What was deployed or reused; also returned for tests.
    struct Deployment {
        address collateral;
        address marketFactory;
        address gate;
        address keeper;
        address deployer;
        bool deployedCollateral;
        bool deployedFactory;
    }

    function run() external returns (Deployment memory d) {
        IRiskGate.Params memory bounds = readBounds();
        uint256 key = vm.envOr("DEPLOYER_PRIVATE_KEY", uint256(0));
        if (key != 0) {
            d.deployer = vm.addr(key);
            vm.startBroadcast(key);
        } else {
            // forge's own signer options (--account, --ledger, ...) with --sender.
            d.deployer = msg.sender;
            vm.startBroadcast();
        }
        d.keeper = vm.envOr("KEEPER_ADDRESS", d.deployer);

        d.collateral = vm.envOr("COLLATERAL", address(0));
        d.marketFactory = vm.envOr("MARKET_FACTORY", address(0));
        if (d.marketFactory != address(0)) {
            _requireCode("MARKET_FACTORY", d.marketFactory);
            address factoryCollateral = IMarketFactory(d.marketFactory).collateral();
            if (d.collateral == address(0)) {
                d.collateral = factoryCollateral;
            } else if (d.collateral != factoryCollateral) {
                revert FactoryCollateralMismatch(d.marketFactory, factoryCollateral, d.collateral);
            }
        }
        if (d.collateral == address(0)) {
            d.collateral = address(new TestCollateral());
            d.deployedCollateral = true;
        } else {
            _requireCode("COLLATERAL", d.collateral);
        }
        if (d.marketFactory == address(0)) {
            d.marketFactory = address(new MarketFactory(d.collateral));
            d.deployedFactory = true;
        }
        d.gate = address(new RiskGate(bounds, d.collateral, d.marketFactory, d.keeper));
        vm.stopBroadcast();

        _report(d);
    }

    /// @notice The bounds from `GATE_*` environment variables, defaults where unset. The gate's
    /// constructor validates them (and reverts naming the field and value).
    function readBounds() public view returns (IRiskGate.Params memory bounds) {
        bounds.minPrice = vm.envOr("GATE_MIN_PRICE", DEFAULT_MIN_PRICE);
        bounds.maxPrice = vm.envOr("GATE_MAX_PRICE", DEFAULT_MAX_PRICE);
        bounds.maxSize = vm.envOr("GATE_MAX_SIZE", DEFAULT_MAX_SIZE);
        uint256 headroom = vm.envOr("GATE_MIN_HEADROOM", DEFAULT_MIN_HEADROOM);
        if (headroom > type(uint32).max) {
            revert EnvValueTooLarge("GATE_MIN_HEADROOM", headroom, type(uint32).max);
        }
        uint256 concurrent = vm.envOr("GATE_MAX_CONCURRENT", DEFAULT_MAX_CONCURRENT);
        if (concurrent > type(uint8).max) {
            revert EnvValueTooLarge("GATE_MAX_CONCURRENT", concurrent, type(uint8).max);
        }
        // casting is safe because both values were range-checked just above.
        // forge-lint: disable-next-line(unsafe-typecast)
        bounds.minHeadroom = uint32(headroom);
        // forge-lint: disable-next-line(unsafe-typecast)
        bounds.maxConcurrent = uint8(concurrent);
        bounds.maxNotional = vm.envOr("GATE_MAX_NOTIONAL", DEFAULT_MAX_NOTIONAL);
    }

    // ---

    function _requireCode(string memory name, address account) private view {
        if (account.code.length == 0) revert NoCodeAt(name, account);
    }

    /// @dev Logs what is on chain now (bounds read back from the gate, not from the inputs) and
    /// writes deployments/<chainId>.json for the keeper and the demo.
    function _report(Deployment memory d) private {
        IRiskGate gate = IRiskGate(d.gate);
        IRiskGate.Params memory onChain = gate.bounds();
        bytes32 hash = gate.paramsHash();

        console.log("chain id", block.chainid);
        console.log("deployer", d.deployer);
        console.log(d.deployedCollateral ? "collateral (new)" : "collateral (reused)", d.collateral);
        console.log(d.deployedFactory ? "factory (new)" : "factory (reused)", d.marketFactory);
        console.log("gate", d.gate);
        console.log("keeper", d.keeper);
        console.log("bounds.minPrice", onChain.minPrice);
        console.log("bounds.maxPrice", onChain.maxPrice);
        console.log("bounds.maxSize", onChain.maxSize);
        console.log("bounds.minHeadroom", uint256(onChain.minHeadroom));
        console.log("bounds.maxConcurrent", uint256(onChain.maxConcurrent));
        console.log("bounds.maxNotional", onChain.maxNotional);
        console.log("paramsHash", vm.toString(hash));

        string memory obj = "deployment";
        vm.serializeUint(obj, "chainId", block.chainid);
        vm.serializeAddress(obj, "collateral", d.collateral);
        vm.serializeAddress(obj, "marketFactory", d.marketFactory);
        vm.serializeAddress(obj, "keeper", d.keeper);
        vm.serializeAddress(obj, "deployer", d.deployer);
        vm.serializeBytes32(obj, "paramsHash", hash);
        string memory json = vm.serializeAddress(obj, "gate", d.gate);
        vm.createDir("deployments", true);
        vm.writeJson(json, string.concat("deployments/", vm.toString(block.chainid), ".json"));
    }
}
