// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Script, console} from "./utils/Script.sol";
import {IRiskGate} from "../contracts/src/interfaces/IRiskGate.sol";
import {IMarketFactory} from "../contracts/src/interfaces/IMarketFactory.sol";
import {RiskGate} from "../contracts/src/RiskGate.sol";
import {GateLimits} from "../contracts/src/libraries/GateLimits.sol";
import {MarketFactory} from "../contracts/src/venue/MarketFactory.sol";
import {ISomniaAgents} from "../contracts/src/interfaces/ISomniaAgents.sol";
import {SomniaVerdictSource} from "../contracts/src/sources/SomniaVerdictSource.sol";
import {TestCollateral} from "../contracts/src/venue/TestCollateral.sol";

/// @dev forge cheatcodes that the shared `Vm` interface does not list: the array forms of
/// `envOr` and `serializeAddress` (signatures as forge defines them).
interface VmEnvArrays {
    function envOr(string calldata name, string calldata delim, address[] calldata defaultValue)
        external
        view
        returns (address[] memory value);
    function serializeAddress(
        string calldata objectKey,
        string calldata valueKey,
        address[] calldata values
    ) external returns (string memory json);
}

/// @title Deploy
/// @notice Deploys the collateral, the market factory and the gate, reusing what already exists.
/// Everything comes from the environment; no secret is ever a flag or a file:
/// - signer: `DEPLOYER_PRIVATE_KEY` if set, otherwise forge's own `--account <keystore>` (or
///   `--ledger`, ...) with `--sender`;
/// - `COLLATERAL`, `MARKET_FACTORY`: existing addresses to reuse (a factory alone implies its
///   collateral); unset means deploy a fresh TestCollateral / MarketFactory;
/// - `KEEPER_ADDRESS`: the gate's keeper, default the broadcaster;
/// - the bounds `GATE_*`, defaults below, in 6-decimal collateral units and 1e6 price units;
/// - `GATE_TRUSTED_RESOLVERS`: comma-separated resolver addresses the gate will trade under;
/// - `GATE_TRUSTED_CREATORS`: comma-separated addresses whose markets the gate will trade.
///   Both are required, with no default: each role gets its own address, and the keeper may
///   be neither (a stolen keeper key must not also decide outcomes or make trusted markets).
///   Sorted ascending here (the gate requires it); a zero address, a duplicate or the keeper
///   is refused before anything is deployed.
/// - `GATE_ATTESTORS`: comma-separated attestor addresses; unset or empty deploys a relayed gate
///   (the keeper submits answers). Set, the gate is attested for its whole life, with
///   `GATE_ATTESTOR_THRESHOLD` (default a majority), `GATE_MAX_READ_AGE` blocks (default 5) and
///   `GATE_MAX_SLIPPAGE_BPS` (default 200). Sorted and checked as the trusted lists are.
/// - `SOMNIA_PLATFORM`: Somnia's agent platform; set, the gate is a consensus gate for its whole
///   life, with a `SomniaVerdictSource` deployed just before it (naming the gate's address to
///   come): `SOMNIA_SYSTEM` (the system text, required: the keeper's for its strategy),
///   `SOMNIA_AGENT_ID` (default the LLM agent), `SOMNIA_PRICE_PER_AGENT` (wei, default 0.07
///   ether), `SOMNIA_SUBCOMMITTEE` (default 3), `SOMNIA_THRESHOLD` (default a majority),
///   `SOMNIA_CONSENSUS` (0 Majority, the default, or 1 Threshold), `SOMNIA_TIMEOUT` (default
///   60), and `GATE_MAX_READ_AGE` and `GATE_MAX_SLIPPAGE_BPS` as for an attested gate. Not with
///   `GATE_ATTESTORS`. See docs/somnia.md.
/// Writes `deployments/<chainId>.json` in the keeper's format (see `_report`) and logs the bounds
/// read back from the deployed gate.
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
    /// @dev 7 days: no market expiring later is traded (no slot locked for longer).
    uint256 internal constant DEFAULT_MAX_HORIZON = 604_800;
    /// @dev 500 tUSD below the high-water mark at most, whatever the markets or the keeper do.
    uint256 internal constant DEFAULT_MAX_DRAWDOWN = 500e6;
    /// @dev 1 day after expiry an unresolved position may be written off (the floor is 1 hour).
    uint256 internal constant DEFAULT_WRITE_OFF_GRACE = 86_400;
    /// @dev 25 %: a fill below a quarter of the order is undone.
    uint256 internal constant DEFAULT_MIN_FILL_BPS = 2_500;
    /// @dev An attested read may lie 5 blocks behind the block its decision is mined in.
    uint256 internal constant DEFAULT_MAX_READ_AGE = 5;
    /// @dev 2 % above the attested best price at most.
    uint256 internal constant DEFAULT_MAX_SLIPPAGE_BPS = 200;
    /// @dev Somnia's LLM inference agent (docs.somnia.network).
    uint256 internal constant SOMNIA_LLM_AGENT_ID = 12847293847561029384;
    /// @dev The LLM agent's documented price per validator.
    uint256 internal constant SOMNIA_LLM_PRICE = 0.07 ether;
    uint256 internal constant DEFAULT_SUBCOMMITTEE = 3;
    uint256 internal constant DEFAULT_SOMNIA_TIMEOUT = 60;
    /// @dev Blocks between two asks about one market: what a stranger can make the source
    /// spend on one trusted market is one request per interval (docs/somnia.md).
    uint256 internal constant DEFAULT_SOMNIA_ASK_INTERVAL = 600;
    uint256 private constant U8 = type(uint8).max;
    uint256 private constant U16 = type(uint16).max;
    uint256 private constant U32 = type(uint32).max;

    error NoCodeAt(string name, address account);
    error FactoryCollateralMismatch(address factory, address factoryCollateral, address given);
    error EnvValueTooLarge(string name, uint256 value, uint256 max);
    /// @notice `variable` (GATE_TRUSTED_RESOLVERS or GATE_TRUSTED_CREATORS) is unset or empty.
    /// There is no default: the deployer is not trusted in any role by accident.
    error TrustedListMissing(string variable);
    /// @notice `variable` names more addresses than the gate can hold.
    error TrustedListTooLong(string variable, uint256 count, uint256 max);
    /// @notice `variable` has the zero address at `position` (0-based, as given).
    error TrustedListZero(string variable, uint256 position);
    /// @notice `variable` names `account` twice: a typo for another address?
    error TrustedListDuplicate(string variable, address account);
    /// @notice `variable` names the keeper: the keeper key may hold no other role.
    error TrustedListHasKeeper(string variable, address keeper);
    /// @notice An attestor setting is set while `GATE_ATTESTORS` is not: a relayed gate has none.
    error AttestorSettingWithoutAttestors(string variable);
    /// @notice `GATE_ATTESTORS` and `SOMNIA_PLATFORM` are both set: a gate has one mode.
    error TwoModes();
    /// @notice `SOMNIA_PLATFORM` is set without `SOMNIA_SYSTEM`.
    error SomniaSystemMissing();

    /// @notice What was deployed or reused; also returned for tests.
    struct Deployment {
        address collateral;
        address marketFactory;
        address gate;
        address keeper;
        address deployer;
        address verdictSource;
        bool deployedCollateral;
        bool deployedFactory;
    }

    function run() external returns (Deployment memory d) {
        IRiskGate.Params memory bounds = readBounds();
        uint256 key = vm.envOr("DEPLOYER_PRIVATE_KEY", uint256(0));
        // forge's own signer options (--account, --ledger, ...) with --sender otherwise.
        d.deployer = key != 0 ? vm.addr(key) : msg.sender;
        d.keeper = vm.envOr("KEEPER_ADDRESS", d.deployer);
        // Checked before the first transaction, so a bad list deploys nothing.
        address[] memory resolvers =
            readTrustedList("GATE_TRUSTED_RESOLVERS", d.keeper, GateLimits.MAX_TRUSTED_RESOLVERS);
        address[] memory creators =
            readTrustedList("GATE_TRUSTED_CREATORS", d.keeper, GateLimits.MAX_TRUSTED_CREATORS);
        bool consensus = vm.envOr("SOMNIA_PLATFORM", address(0)) != address(0);
        IRiskGate.Attestors memory attestors =
            consensus ? readConsensusBounds() : readAttestors(d.keeper);
        if (key != 0) vm.startBroadcast(key);
        else vm.startBroadcast();

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
        if (consensus) {
            // The source first, naming the address the gate is created at next.
            address gateAt = vm.computeCreateAddress(d.deployer, vm.getNonce(d.deployer) + 1);
            d.verdictSource = address(new SomniaVerdictSource(readSomnia(gateAt, attestors)));
        }
        d.gate = address(
            new RiskGate(
                bounds,
                resolvers,
                creators,
                d.collateral,
                d.marketFactory,
                d.keeper,
                attestors,
                d.verdictSource
            )
        );
        vm.stopBroadcast();

        _report(d);
    }

    /// @notice The bounds from `GATE_*` environment variables, defaults where unset. The gate's
    /// constructor validates them (and reverts naming the field and value).
    function readBounds() public view returns (IRiskGate.Params memory bounds) {
        bounds.minPrice = vm.envOr("GATE_MIN_PRICE", DEFAULT_MIN_PRICE);
        bounds.maxPrice = vm.envOr("GATE_MAX_PRICE", DEFAULT_MAX_PRICE);
        bounds.maxSize = vm.envOr("GATE_MAX_SIZE", DEFAULT_MAX_SIZE);
        bounds.maxNotional = vm.envOr("GATE_MAX_NOTIONAL", DEFAULT_MAX_NOTIONAL);
        bounds.maxDrawdown = vm.envOr("GATE_MAX_DRAWDOWN", DEFAULT_MAX_DRAWDOWN);
        // The casts below are safe: _envUpTo range-checked each value against its type.
        // forge-lint: disable-next-line(unsafe-typecast)
        bounds.minHeadroom = uint32(_envUpTo("GATE_MIN_HEADROOM", DEFAULT_MIN_HEADROOM, U32));
        // forge-lint: disable-next-line(unsafe-typecast)
        bounds.maxConcurrent = uint8(_envUpTo("GATE_MAX_CONCURRENT", DEFAULT_MAX_CONCURRENT, U8));
        // forge-lint: disable-next-line(unsafe-typecast)
        bounds.maxHorizon = uint32(_envUpTo("GATE_MAX_HORIZON", DEFAULT_MAX_HORIZON, U32));
        // forge-lint: disable-next-line(unsafe-typecast)
        bounds.writeOffGrace =
            uint32(_envUpTo("GATE_WRITE_OFF_GRACE", DEFAULT_WRITE_OFF_GRACE, U32));
        // forge-lint: disable-next-line(unsafe-typecast)
        bounds.minFillBps = uint16(_envUpTo("GATE_MIN_FILL_BPS", DEFAULT_MIN_FILL_BPS, U16));
    }

    /// @notice The comma-separated addresses in `variable`, sorted ascending as the gate
    /// requires. Reverts naming the problem when the list is missing or empty, too long, or holds
    /// the zero address, a duplicate or the keeper (these would otherwise surface only as the
    /// gate's less specific constructor errors, after the collateral and factory were deployed).
    /// `max` is the gate's own limit for the list (`GateLimits.MAX_TRUSTED_RESOLVERS` or
    /// `MAX_TRUSTED_CREATORS`), checked here only to refuse a long list before anything is
    /// deployed; the gate's constructor remains the authority.
    function readTrustedList(string memory variable, address keeper, uint256 max)
        public
        view
        returns (address[] memory list)
    {
        list = VmEnvArrays(address(vm)).envOr(variable, ",", new address[](0));
        if (list.length == 0) revert TrustedListMissing(variable);
        _sortChecked(variable, list, keeper, max);
    }

    /// @notice The gate's mode from `GATE_ATTESTORS` and its settings (see the contract's doc).
    /// The gate's constructor validates the result and remains the authority.
    function readAttestors(address keeper) public view returns (IRiskGate.Attestors memory a) {
        a.signers = VmEnvArrays(address(vm)).envOr("GATE_ATTESTORS", ",", new address[](0));
        if (a.signers.length == 0) {
            string[3] memory settings =
                ["GATE_ATTESTOR_THRESHOLD", "GATE_MAX_READ_AGE", "GATE_MAX_SLIPPAGE_BPS"];
            for (uint256 i; i < settings.length; ++i) {
                if (vm.envOr(settings[i], uint256(0)) != 0) {
                    revert AttestorSettingWithoutAttestors(settings[i]);
                }
            }
            return a;
        }
        _sortChecked("GATE_ATTESTORS", a.signers, keeper, GateLimits.MAX_ATTESTORS);
        // The casts below are safe: _envUpTo range-checked each value against its type.
        // forge-lint: disable-next-line(unsafe-typecast)
        a.threshold = uint8(_envUpTo("GATE_ATTESTOR_THRESHOLD", a.signers.length / 2 + 1, U8));
        // forge-lint: disable-next-line(unsafe-typecast)
        a.maxReadAge = uint32(_envUpTo("GATE_MAX_READ_AGE", DEFAULT_MAX_READ_AGE, U32));
        // forge-lint: disable-next-line(unsafe-typecast)
        a.maxSlippageBps = uint16(_envUpTo("GATE_MAX_SLIPPAGE_BPS", DEFAULT_MAX_SLIPPAGE_BPS, U16));
    }

    /// @notice A consensus gate's setting: no signers, no threshold, the read bounds from
    /// `GATE_MAX_READ_AGE` and `GATE_MAX_SLIPPAGE_BPS` (defaults 5 and 200).
    function readConsensusBounds() public view returns (IRiskGate.Attestors memory a) {
        if (VmEnvArrays(address(vm)).envOr("GATE_ATTESTORS", ",", new address[](0)).length != 0) {
            revert TwoModes();
        }
        a.signers = new address[](0);
        // The casts below are safe: _envUpTo range-checked each value against its type.
        // forge-lint: disable-next-line(unsafe-typecast)
        a.maxReadAge = uint32(_envUpTo("GATE_MAX_READ_AGE", DEFAULT_MAX_READ_AGE, U32));
        // forge-lint: disable-next-line(unsafe-typecast)
        a.maxSlippageBps = uint16(_envUpTo("GATE_MAX_SLIPPAGE_BPS", DEFAULT_MAX_SLIPPAGE_BPS, U16));
    }

    /// @notice The verdict source's settings from `SOMNIA_*` (see the contract's doc), for the
    /// gate at `gateAt` with the read bounds `a`. The source's constructor validates them.
    function readSomnia(address gateAt, IRiskGate.Attestors memory a)
        public
        view
        returns (SomniaVerdictSource.Settings memory s)
    {
        s.system = vm.envOr("SOMNIA_SYSTEM", string(""));
        if (bytes(s.system).length == 0) revert SomniaSystemMissing();
        s.gate = gateAt;
        s.platform = ISomniaAgents(vm.envAddress("SOMNIA_PLATFORM"));
        s.agentId = vm.envOr("SOMNIA_AGENT_ID", SOMNIA_LLM_AGENT_ID);
        s.pricePerAgent = vm.envOr("SOMNIA_PRICE_PER_AGENT", SOMNIA_LLM_PRICE);
        // The casts below are safe: _envUpTo range-checked each value against its type.
        // forge-lint: disable-next-line(unsafe-typecast)
        s.subcommitteeSize = uint8(_envUpTo("SOMNIA_SUBCOMMITTEE", DEFAULT_SUBCOMMITTEE, U8));
        // forge-lint: disable-next-line(unsafe-typecast)
        s.threshold = uint8(_envUpTo("SOMNIA_THRESHOLD", s.subcommitteeSize / 2 + 1, U8));
        s.consensusType = _envUpTo("SOMNIA_CONSENSUS", 0, 1) == 0
            ? ISomniaAgents.ConsensusType.Majority
            : ISomniaAgents.ConsensusType.Threshold;
        s.timeout = vm.envOr("SOMNIA_TIMEOUT", DEFAULT_SOMNIA_TIMEOUT);
        // forge-lint: disable-next-line(unsafe-typecast)
        s.askInterval = uint32(_envUpTo("SOMNIA_ASK_INTERVAL", DEFAULT_SOMNIA_ASK_INTERVAL, U32));
        s.maxReadAge = a.maxReadAge;
        s.maxSlippageBps = a.maxSlippageBps;
    }

    // ---

    /// @dev Refuses a list too long or holding the zero address, the keeper or a duplicate,
    /// and sorts it ascending in place.
    function _sortChecked(
        string memory variable,
        address[] memory list,
        address keeper,
        uint256 max
    ) private pure {
        if (list.length > max) {
            revert TrustedListTooLong(variable, list.length, max);
        }
        for (uint256 i; i < list.length; ++i) {
            if (list[i] == address(0)) revert TrustedListZero(variable, i);
            if (list[i] == keeper) revert TrustedListHasKeeper(variable, keeper);
        }
        // Insertion sort: at most 8 entries.
        for (uint256 i = 1; i < list.length; ++i) {
            address current = list[i];
            uint256 j = i;
            while (j > 0 && list[j - 1] > current) {
                list[j] = list[j - 1];
                --j;
            }
            list[j] = current;
        }
        for (uint256 i = 1; i < list.length; ++i) {
            if (list[i] == list[i - 1]) revert TrustedListDuplicate(variable, list[i]);
        }
    }

    /// @dev An unsigned `GATE_*` value that must fit a narrower field.
    function _envUpTo(string memory name, uint256 byDefault, uint256 max)
        private
        view
        returns (uint256 value)
    {
        value = vm.envOr(name, byDefault);
        if (value > max) revert EnvValueTooLarge(name, value, max);
    }

    function _requireCode(string memory name, address account) private view {
        if (account.code.length == 0) revert NoCodeAt(name, account);
    }

    /// @dev Logs what is on chain now (bounds read back from the gate, not from the inputs) and
    /// writes the gate's entry, deployments/<chainId>/<gate>.json, and the chain's default,
    /// deployments/<chainId>.json, for the keeper and the demo. Another gate's entry in the
    /// default is first kept in its own file, so a second deployment drops nothing.
    function _report(Deployment memory d) private {
        IRiskGate gate = IRiskGate(d.gate);
        IRiskGate.Params memory onChain = gate.bounds();
        bytes32 hash = gate.paramsHash();

        console.log("chain id", block.chainid);
        console.log("deployer", d.deployer);
        console.log(d.deployedCollateral ? "collateral (new)" : "collateral (reused)", d.collateral);
        console.log(d.deployedFactory ? "factory (new)" : "factory (reused)", d.marketFactory);
        console.log("gate", d.gate);
        if (d.verdictSource != address(0)) console.log("verdict source", d.verdictSource);
        console.log("keeper", d.keeper);
        console.log("bounds.minPrice", onChain.minPrice);
        console.log("bounds.maxPrice", onChain.maxPrice);
        console.log("bounds.maxSize", onChain.maxSize);
        console.log("bounds.minHeadroom", uint256(onChain.minHeadroom));
        console.log("bounds.maxConcurrent", uint256(onChain.maxConcurrent));
        console.log("bounds.maxNotional", onChain.maxNotional);
        console.log("bounds.maxHorizon", uint256(onChain.maxHorizon));
        console.log("bounds.maxDrawdown", onChain.maxDrawdown);
        console.log("bounds.writeOffGrace", uint256(onChain.writeOffGrace));
        console.log("bounds.minFillBps", uint256(onChain.minFillBps));
        address[] memory resolvers = gate.trustedResolvers();
        for (uint256 i; i < resolvers.length; ++i) {
            console.log(string.concat("trustedResolver[", vm.toString(i), "]"), resolvers[i]);
        }
        address[] memory creators = gate.trustedCreators();
        for (uint256 i; i < creators.length; ++i) {
            console.log(string.concat("trustedCreator[", vm.toString(i), "]"), creators[i]);
        }
        console.log("paramsHash", vm.toString(hash));

        // The keys and formats of the keeper's `deploy::Deployment`, so `keeper run` reads this
        // file as it reads its own. The deploy block itself cannot be known here: forge runs the
        // script as a simulation on the head and broadcasts afterwards, so `block.number` now is
        // the simulated head, a lower bound of the block the gate lands in. It is written as
        // `deploy_block_not_before`; the keeper finds the exact `deploy_block` from the gate's
        // `GateDeployed` log at first use and rewrites the file with it.
        string memory obj = "deployment";
        vm.serializeUint(obj, "chain_id", block.chainid);
        vm.serializeAddress(obj, "gate", d.gate);
        vm.serializeAddress(obj, "collateral", d.collateral);
        vm.serializeAddress(obj, "factory", d.marketFactory);
        vm.serializeAddress(obj, "keeper", d.keeper);
        VmEnvArrays(address(vm)).serializeAddress(obj, "trusted_resolvers", resolvers);
        VmEnvArrays(address(vm)).serializeAddress(obj, "trusted_creators", creators);
        vm.serializeUint(obj, "deploy_block_not_before", block.number);
        string memory json = vm.serializeBytes32(obj, "params_hash", hash);
        string memory dir = string.concat("deployments/", vm.toString(block.chainid));
        string memory defaultPath = string.concat(dir, ".json");
        vm.createDir(dir, true);
        if (vm.exists(defaultPath)) {
            string memory old = vm.readFile(defaultPath);
            address oldGate = vm.parseJsonAddress(old, ".gate");
            string memory kept = string.concat(dir, "/", vm.toString(oldGate), ".json");
            if (oldGate != d.gate && !vm.exists(kept)) vm.writeFile(kept, old);
        }
        vm.writeJson(json, string.concat(dir, "/", vm.toString(d.gate), ".json"));
        vm.writeJson(json, defaultPath);
    }
}
