// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Ownable, Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {IRiskGate} from "./interfaces/IRiskGate.sol";
import {IBinaryMarket} from "./interfaces/IBinaryMarket.sol";
import {IMarketFactory} from "./interfaces/IMarketFactory.sol";
import {AttestorSet} from "./AttestorSet.sol";
import {RiskGateViews} from "./RiskGateViews.sol";
import {IAttestorSet} from "./interfaces/IAttestorSet.sol";
import {IVerdictSource} from "./interfaces/IVerdictSource.sol";
import {GateLimits} from "./libraries/GateLimits.sol";
import {GateRules} from "./libraries/GateRules.sol";
import {Ledger} from "./libraries/Ledger.sol";
import {Reason, Reasons, Verdict, Verdicts} from "./libraries/GateTypes.sol";
import {Units} from "./libraries/Units.sol";
import {VerdictParser} from "./libraries/VerdictParser.sol";

/// @title RiskGate
/// @notice Turns a model's one-word answer into an order whose price and size come only from the
/// live book and from bounds fixed at deploy. The keeper chooses a market, relays the answer and
/// may tighten the price with its quote; it never loosens a bound. The owner can pause, rotate
/// the keeper and withdraw collateral, and can never change a bound, a trusted resolver or a
/// trusted creator. Its account of the equity it should hold makes every deposit, donation and
/// withdrawal leave `H - equity` unchanged, so the drawdown bound holds for its whole life.
contract RiskGate is IRiskGate, Ownable2Step, ReentrancyGuardTransient {
    using SafeERC20 for IERC20;
    using Ledger for Ledger.State;

    /// @notice The lowest `minHeadroom` any deployment may choose, in seconds.
    uint32 public constant MIN_HEADROOM_FLOOR = 120;
    /// @notice The lowest `writeOffGrace` any deployment may choose, in seconds: a resolver gets
    /// at least an hour after expiry before its market's position is counted as lost.
    uint32 public constant WRITE_OFF_GRACE_FLOOR = 3600;
    /// @notice The most trusted resolvers a gate may name (each is an immutable).
    uint256 public constant MAX_TRUSTED_RESOLVERS = GateLimits.MAX_TRUSTED_RESOLVERS;
    /// @notice The most trusted market creators a gate may name (each is an immutable).
    uint256 public constant MAX_TRUSTED_CREATORS = GateLimits.MAX_TRUSTED_CREATORS;
    /// @notice The most attestors an attested gate may name (each is an immutable).
    uint256 public constant MAX_ATTESTORS = GateLimits.MAX_ATTESTORS;
    /// @notice Probability 1.0 in price units; `maxPrice` must stay below it.
    uint256 public constant PRICE_ONE = Units.ONE;
    /// @notice 100 % in basis points; `minFillBps` must not exceed it.
    uint16 public constant BPS = uint16(Units.BPS);
    /// @notice The `verdict` of a `Decision` whose raw answer did not parse.
    uint8 public constant VERDICT_INVALID = Verdict.unwrap(Verdicts.INVALID);
    /// @notice How much of the raw answer the `Decision` log carries; every parseable answer is
    /// at most this long, so a valid answer is always logged whole.
    uint256 public constant RAW_HEAD_BYTES = VerdictParser.MAX_RAW_LENGTH;
    /// @notice The most gas a batch element's order may use (`submitVerdicts`): over twice what
    /// the venue's worst take needs, MAX_MATCHES_PER_TAKE resting orders of distinct makers on
    /// distinct levels (1,971,264 gas; `test_orderGas_coversATakeOfMaxMatches` measures it).
    uint256 public constant ORDER_GAS = 4_000_000;
    /// @dev What must be left before a batch order's self-call for the call to get ORDER_GAS: the
    /// EVM passes at most 63/64 of what is left, and the call's arguments cost a little first.
    uint256 internal constant ORDER_GAS_NEEDED = ORDER_GAS * 64 / 63 + 10_000;
    /// @dev The fixed head of `submitAttested`'s arguments: market, readBlock, the two arrays'
    /// offsets and the quote's two words.
    uint256 internal constant ATTESTED_HEAD_BYTES = 6 * 32;
    /// @dev ABI sizes of the two static structs `evaluate` copies from calldata.
    uint256 internal constant SNAPSHOT_BYTES = 15 * 32;
    uint256 internal constant QUOTE_BYTES = 2 * 32;

    uint256 internal immutable _minPrice;
    uint256 internal immutable _maxPrice;
    uint256 internal immutable _maxSize;
    uint32 internal immutable _minHeadroom;
    uint8 internal immutable _maxConcurrent;
    uint256 internal immutable _maxNotional;
    uint32 internal immutable _maxHorizon;
    uint256 internal immutable _maxDrawdown;
    uint32 internal immutable _writeOffGrace;
    uint16 internal immutable _minFillBps;
    bytes32 internal immutable _paramsHash;
    IERC20 internal immutable _collateral;
    IMarketFactory internal immutable _factory;

    // Trusted resolvers as immutables (no storage read per decision); unused ones are zero.
    uint256 internal immutable _resolverCount;
    address internal immutable _resolver0;
    address internal immutable _resolver1;
    address internal immutable _resolver2;
    address internal immutable _resolver3;
    address internal immutable _resolver4;
    address internal immutable _resolver5;
    address internal immutable _resolver6;
    address internal immutable _resolver7;

    // Trusted creators, likewise.
    uint256 internal immutable _creatorCount;
    address internal immutable _creator0;
    address internal immutable _creator1;
    address internal immutable _creator2;
    address internal immutable _creator3;
    address internal immutable _creator4;
    address internal immutable _creator5;
    address internal immutable _creator6;
    address internal immutable _creator7;

    // The attested mode's signers and settings, in a contract this gate deployed; none when
    // the gate is relayed.
    IAttestorSet internal immutable _attestorSet;

    // The consensus mode's verdict source, which applies the mode's read bounds itself (the
    // constructor checks they are the ones given); zero on other gates.
    address internal immutable _verdictSource;
    // The views no rule reads (`RiskGateViews`), deployed by the constructor.
    address internal immutable _views;

    /// @dev One decision on its way to the log.
    struct Decided {
        Verdict verdict;
        Reason reason;
        uint32 failedMask;
        bytes snapshot; // abi.encode(Snapshot, Quote), or empty when nothing was evaluated
        Order order;
    }

    // One slot: every submitVerdict reads keeper and paused, and a PASS updates the count.
    address internal _keeper;
    bool internal _paused;
    uint8 internal _openPositions;

    /// @dev Positions, open notional, H and the account K (slots 3 to 6).
    Ledger.State internal _ledger;

    /// @dev The last `readBlock` an attested decision used, per market: the next must be above
    /// it, so each `(market, readBlock)` is used at most once.
    mapping(address market => uint64 readBlock) internal _lastAttestedRead;

    // ---

    constructor(
        Params memory bounds_,
        address[] memory trustedResolvers_,
        address[] memory trustedCreators_,
        address collateral_,
        address marketFactory_,
        address keeper_,
        Attestors memory attestors_,
        address verdictSource_
    ) Ownable(msg.sender) {
        _checkBounds(bounds_);
        _checkResolvers(trustedResolvers_);
        _checkCreators(trustedCreators_);
        if (collateral_ == address(0)) revert ZeroAddress("collateral");
        if (marketFactory_ == address(0)) revert ZeroAddress("marketFactory");
        if (keeper_ == address(0)) revert ZeroAddress("keeper");
        // A factory over another token would make every PASS revert, publishing nothing.
        address traded = IMarketFactory(marketFactory_).collateral();
        if (traded != collateral_) revert FactoryCollateralMismatch(traded, collateral_);
        _checkAttestors(attestors_, keeper_, verdictSource_);

        _minPrice = bounds_.minPrice;
        _maxPrice = bounds_.maxPrice;
        _maxSize = bounds_.maxSize;
        _minHeadroom = bounds_.minHeadroom;
        _maxConcurrent = bounds_.maxConcurrent;
        _maxNotional = bounds_.maxNotional;
        _maxHorizon = bounds_.maxHorizon;
        _maxDrawdown = bounds_.maxDrawdown;
        _writeOffGrace = bounds_.writeOffGrace;
        _minFillBps = bounds_.minFillBps;
        _paramsHash = keccak256(
            abi.encode(bounds_, trustedResolvers_, trustedCreators_, attestors_, verdictSource_)
        );
        _collateral = IERC20(collateral_);
        _factory = IMarketFactory(marketFactory_);
        _keeper = keeper_;

        uint256 n = trustedResolvers_.length;
        _resolverCount = n;
        _resolver0 = trustedResolvers_[0];
        _resolver1 = n > 1 ? trustedResolvers_[1] : address(0);
        _resolver2 = n > 2 ? trustedResolvers_[2] : address(0);
        _resolver3 = n > 3 ? trustedResolvers_[3] : address(0);
        _resolver4 = n > 4 ? trustedResolvers_[4] : address(0);
        _resolver5 = n > 5 ? trustedResolvers_[5] : address(0);
        _resolver6 = n > 6 ? trustedResolvers_[6] : address(0);
        _resolver7 = n > 7 ? trustedResolvers_[7] : address(0);

        n = trustedCreators_.length;
        _creatorCount = n;
        _creator0 = trustedCreators_[0];
        _creator1 = n > 1 ? trustedCreators_[1] : address(0);
        _creator2 = n > 2 ? trustedCreators_[2] : address(0);
        _creator3 = n > 3 ? trustedCreators_[3] : address(0);
        _creator4 = n > 4 ? trustedCreators_[4] : address(0);
        _creator5 = n > 5 ? trustedCreators_[5] : address(0);
        _creator6 = n > 6 ? trustedCreators_[6] : address(0);
        _creator7 = n > 7 ? trustedCreators_[7] : address(0);
        if (attestors_.signers.length != 0) {
            _attestorSet = IAttestorSet(address(new AttestorSet(attestors_)));
        }
        _views = address(new RiskGateViews(bounds_, trustedResolvers_, trustedCreators_));
        // Zero is the relayed and attested modes' setting; a non-zero source was checked above.
        // slither-disable-next-line missing-zero-check
        _verdictSource = verdictSource_;

        // Immutables cannot be read in the constructor, so the keeper is checked against the
        // lists themselves.
        _checkKeeperUntrusted(keeper_, trustedResolvers_, trustedCreators_);

        emit GateDeployed(
            _paramsHash,
            bounds_,
            trustedResolvers_,
            trustedCreators_,
            collateral_,
            marketFactory_,
            keeper_,
            attestors_,
            verdictSource_
        );
        emit KeeperRotated(address(0), keeper_);
    }

    // ---

    /// @inheritdoc IRiskGate
    function parseVerdict(string calldata raw) external pure returns (uint8 verdict) {
        (bool ok, Verdict parsed) = VerdictParser.tryParse(raw);
        if (!ok) revert UnknownVerdict(bytes(raw).length, VerdictParser.head(raw));
        return Verdict.unwrap(parsed);
    }

    /// @inheritdoc IRiskGate
    function evaluate(Snapshot calldata s, Quote calldata q, uint8 verdict)
        external
        view
        returns (uint8 reason, uint32 failedMask, uint256 pricePaid, uint256 quantity, uint256 cost)
    {
        // Both structs are static, so their calldata words are their memory layout. One copy each
        // instead of Solidity's per-field validated copy: a passing BUY_UP evaluation cost 6,540
        // gas with that copy and 5,655 with this one (struct-log trace on anvil); the masks that
        // follow cost 213 of it back. Narrow fields are masked to their width, so non-canonical
        // high bits are ignored instead of reverting: evaluate never reverts.
        // slither-disable-next-line uninitialized-local
        Snapshot memory sm;
        // slither-disable-next-line uninitialized-local
        Quote memory qm;
        assembly ("memory-safe") {
            calldatacopy(sm, s, SNAPSHOT_BYTES)
            calldatacopy(qm, q, QUOTE_BYTES)
            let u64 := 0xffffffffffffffff
            mstore(add(sm, 0xa0), and(mload(add(sm, 0xa0)), u64)) // expirySec
            mstore(add(sm, 0xc0), and(mload(add(sm, 0xc0)), u64)) // nowSec
            mstore(add(sm, 0xe0), iszero(iszero(mload(add(sm, 0xe0))))) // finalized
            mstore(add(sm, 0x100), and(mload(add(sm, 0x100)), 0xff)) // openPositions
            mstore(add(sm, 0x160), iszero(iszero(mload(add(sm, 0x160))))) // resolverTrusted
            mstore(add(sm, 0x180), and(mload(add(sm, 0x180)), 0xff)) // heldSide
            mstore(add(sm, 0x1c0), iszero(iszero(mload(add(sm, 0x1c0))))) // creatorTrusted
            mstore(add(qm, 0x20), and(mload(add(qm, 0x20)), u64)) // deadline
        }
        GateRules.Outcome memory o = GateRules.evaluate(_bounds(), sm, qm, Verdict.wrap(verdict));
        return (Reason.unwrap(o.reason), o.failedMask, o.pricePaid, o.quantity, o.cost);
    }

    /// @inheritdoc IRiskGate
    function submitVerdict(
        address market,
        string calldata raw,
        bytes32 promptHash,
        uint64 readBlock,
        Quote calldata quote
    ) external nonReentrant returns (uint8 reason) {
        // The keeper cannot bypass an attested gate's attestors or a consensus gate's source.
        if (_mode() != GateMode.Relayed) revert WrongGateMode(_mode());
        address creator = _admit(market, readBlock);

        // slither-disable-next-line uninitialized-local
        Decided memory d;
        bool ok;
        (ok, d.verdict) = VerdictParser.tryParse(raw);
        if (ok) {
            _decide(market, creator, d, quote.maxPricePaid, quote.deadline, false);
        } else {
            // d.verdict is Verdicts.INVALID already.
            d.reason = Reasons.INVALID_VERDICT;
            d.failedMask = uint32(Reasons.INVALID_VERDICT.bit());
        }
        // The event needs the fill, so it follows the market call made inside _decide.
        // slither-disable-next-line reentrancy-events
        _publish(
            market,
            promptHash,
            readBlock,
            d,
            VerdictParser.logged(raw),
            bytes(raw).length,
            keccak256(bytes(raw)),
            ""
        );
        return Reason.unwrap(d.reason);
    }

    /// @inheritdoc IRiskGate
    function submitVerdicts(Submission[] calldata batch)
        external
        nonReentrant
        returns (uint8[] memory reasons)
    {
        if (_mode() != GateMode.Relayed) revert WrongGateMode(_mode());
        if (msg.sender != _keeper) revert NotKeeper(msg.sender, _keeper);
        if (_paused) revert GatePaused();
        uint256 n = batch.length;
        if (n == 0) revert BatchEmpty();
        reasons = new uint8[](n);
        uint256 freeMemory;
        assembly ("memory-safe") {
            freeMemory := mload(0x40)
        }
        for (uint256 i; i < n; ++i) {
            Submission calldata e = batch[i];
            address creator = _creatorOf(e.market, e.readBlock);
            reasons[i] = _relay(e.market, creator, e.raw, e.promptHash, e.readBlock, e.quote, true);
            // Nothing an element allocated is read after it, so the next one reuses its memory:
            // memory costs quadratically, and a batch's last element would otherwise pay for
            // all the earlier ones (and every element for one 100 KB answer).
            assembly ("memory-safe") {
                mstore(0x40, freeMemory)
            }
        }
    }

    /// @dev One relayed decision, admitted: parse, decide (orders `isolated` in a batch), publish.
    function _relay(
        address market,
        address creator,
        string calldata raw,
        bytes32 promptHash,
        uint64 readBlock,
        Quote calldata quote,
        bool isolated
    ) internal returns (uint8) {
        // slither-disable-next-line uninitialized-local
        Decided memory d;
        bool ok;
        (ok, d.verdict) = VerdictParser.tryParse(raw);
        if (ok && d.verdict == Verdicts.ABSTAIN) {
            // _decide's first case, here so that a batch's ABSTAIN reads no quote.
            d.reason = Reasons.ABSTAINED;
            d.failedMask = uint32(Reasons.ABSTAINED.bit());
        } else if (ok) {
            _decide(market, creator, d, quote.maxPricePaid, quote.deadline, isolated);
        } else {
            // d.verdict is Verdicts.INVALID already.
            d.reason = Reasons.INVALID_VERDICT;
            d.failedMask = uint32(Reasons.INVALID_VERDICT.bit());
        }
        // An answer that fits the logged head is hashed from that copy, not copied again.
        bytes memory head = VerdictParser.logged(raw);
        uint256 length = bytes(raw).length;
        bytes32 hash = length > RAW_HEAD_BYTES ? keccak256(bytes(raw)) : keccak256(head);
        // No vote: the zero slot, with nothing allocated for it.
        // slither-disable-next-line uninitialized-local
        bytes memory none;
        // The event needs the fill, so it follows the market call made inside _decide.
        // slither-disable-next-line reentrancy-events
        _publish(market, promptHash, readBlock, d, head, length, hash, none);
        return Reason.unwrap(d.reason);
    }

    /// @inheritdoc IRiskGate
    /// @dev The answers, signatures and appended read are judged by the attestor set, to which
    /// this call's data is forwarded; the gate itself never decodes them.
    function submitAttested(
        address market,
        uint64 readBlock,
        string[] calldata,
        bytes[] calldata,
        Quote calldata quote
    ) external nonReentrant returns (uint8 reason) {
        if (address(_attestorSet) == address(0)) revert WrongGateMode(_mode());
        return _submitAttested(market, readBlock, quote);
    }

    /// @inheritdoc IRiskGate
    /// @dev The judgment is read from this call's data as a memory copy, with the decoder the
    /// attested path already has.
    function submitConsensus(address market, uint64 readBlock, Judgment calldata)
        external
        nonReentrant
        returns (uint8)
    {
        if (msg.sender != _verdictSource) {
            if (_mode() != GateMode.Consensus) revert WrongGateMode(_mode());
            revert NotVerdictSource(msg.sender, _verdictSource);
        }
        address creator = _admitMarket(market, readBlock);
        Judgment memory j = abi.decode(_sourcedJudgment(), (Judgment));
        // The source's limit is the most it allows; the deadline is now, when it answers.
        return _conclude(market, creator, readBlock, j, j.limit, uint64(block.timestamp), false);
    }

    /// @inheritdoc IRiskGate
    /// @dev Each element is forwarded to the attestor set as the `submitAttested` call it is;
    /// the gate reads only its fixed head (market, readBlock, the quote) itself.
    function submitAttestedVerdicts(bytes[] calldata batch)
        external
        nonReentrant
        returns (uint8[] memory reasons)
    {
        if (address(_attestorSet) == address(0)) revert WrongGateMode(_mode());
        if (msg.sender != _keeper) revert NotKeeper(msg.sender, _keeper);
        if (_paused) revert GatePaused();
        uint256 n = batch.length;
        if (n == 0) revert BatchEmpty();
        reasons = new uint8[](n);
        uint256 freeMemory;
        assembly ("memory-safe") {
            freeMemory := mload(0x40)
        }
        for (uint256 i; i < n; ++i) {
            bytes calldata e = batch[i];
            if (e.length < ATTESTED_HEAD_BYTES) {
                revert AttestedElementShort(i, e.length, ATTESTED_HEAD_BYTES);
            }
            // The head of (market, readBlock, raws, sigs, quote): words 0, 1, then 4 and 5.
            (address market, uint64 readBlock) = abi.decode(e[:0x40], (address, uint64));
            Quote memory quote = abi.decode(e[0x80:ATTESTED_HEAD_BYTES], (Quote));
            address creator = _creatorOf(market, readBlock);
            Judgment memory j = _tally(bytes.concat(IRiskGate.submitAttested.selector, e));
            reasons[i] =
                _attested(market, creator, readBlock, j, quote.maxPricePaid, quote.deadline, true);
            // As in submitVerdicts: nothing an element allocated is read after it.
            assembly ("memory-safe") {
                mstore(0x40, freeMemory)
            }
        }
    }

    /// @dev `submitAttested` past its mode check, in a frame without the answers' stack slots.
    function _submitAttested(address market, uint64 readBlock, Quote calldata quote)
        internal
        returns (uint8)
    {
        address creator = _admit(market, readBlock);
        Judgment memory j = _tally(msg.data);
        return _attested(market, creator, readBlock, j, quote.maxPricePaid, quote.deadline, false);
    }

    /// @dev Decides one judged attested answer (its order `isolated` in a batch). Each
    /// (market, readBlock) decides once, whatever it decides: the next attested read of a
    /// market must lie above the last.
    function _attested(
        address market,
        address creator,
        uint64 readBlock,
        Judgment memory j,
        uint256 quoted,
        uint64 deadline,
        bool isolated
    ) internal returns (uint8) {
        if (j.reason != Reason.unwrap(Reasons.NOT_ATTESTED)) {
            if (readBlock <= _lastAttestedRead[market]) {
                j.verdict = Verdict.unwrap(Verdicts.INVALID);
                j.reason = Reason.unwrap(Reasons.NOT_ATTESTED);
            } else {
                _lastAttestedRead[market] = readBlock;
            }
        }
        // The attested book bounds the price; the keeper's quote may only tighten it.
        uint256 limit = quoted < j.limit ? quoted : j.limit;
        return _conclude(market, creator, readBlock, j, limit, deadline, isolated);
    }

    /// @dev Decides a judged answer: on reason 0 its verdict as `submitVerdict` would, under
    /// `maxPricePaid` and `deadline` (its order `isolated` in a batch); any other reason is
    /// published as it stands.
    function _conclude(
        address market,
        address creator,
        uint64 readBlock,
        Judgment memory j,
        uint256 maxPricePaid,
        uint64 deadline,
        bool isolated
    ) internal returns (uint8) {
        // slither-disable-next-line uninitialized-local
        Decided memory d;
        d.verdict = Verdict.wrap(j.verdict);
        d.reason = Reason.wrap(j.reason);
        if (d.reason == Reasons.PASS) {
            _decide(market, creator, d, maxPricePaid, deadline, isolated);
        } else {
            d.failedMask = uint32(d.reason.bit());
        }
        // The event needs the fill, so it follows the market call made inside _decide.
        // slither-disable-next-line reentrancy-events
        _publish(market, j.promptHash, readBlock, d, j.head, j.length, j.hash, j.vote);
        return Reason.unwrap(d.reason);
    }

    /// @inheritdoc IRiskGate
    function executeOrder(
        address market,
        uint8 verdict,
        uint256 limit,
        uint256 quantity,
        uint256 cost
    ) external returns (uint256 filled, uint256 spent) {
        if (msg.sender != address(this)) revert OnlySelf(msg.sender);
        IBinaryMarket m = IBinaryMarket(market);
        _collateral.forceApprove(market, cost);
        // The market is factory-made code (checked in submitVerdict), and submitVerdict holds the
        // reentrancy lock for this whole frame, so a callback (a hook in the collateral) cannot
        // re-enter redeem, writeOff, deposit or withdrawCollateral; the position can only be
        // booked after the fill is known, and a fill below the minimum is undone by this frame's
        // revert. The account is not touched: a buy turns collateral into notional one for one.
        // slither-disable-start reentrancy-benign,reentrancy-no-eth
        Verdict side = Verdict.wrap(verdict);
        if (side == Verdicts.BUY_UP) {
            (filled, spent) = m.buyUp(limit, quantity);
        } else {
            (filled, spent) = m.buyDown(GateRules.upLimitForDown(limit), quantity);
        }
        if (filled > quantity || spent > cost) {
            revert FillOutOfBounds(filled, quantity, spent, cost);
        }
        if (GateRules.fillBelowMinimum(filled, quantity, _minFillBps)) {
            revert FillBelowMinimum(filled, spent);
        }
        if (spent < cost) _collateral.forceApprove(market, 0);

        // The Decision event that submitVerdict emits next carries `spent`.
        // slither-disable-next-line events-maths
        if (_ledger.recordBuy(market, side, filled, spent)) _openPositions += 1;
        // slither-disable-end reentrancy-benign,reentrancy-no-eth
    }

    /// @inheritdoc IRiskGate
    /// @dev Deliberately allowed while paused: closing a position only releases risk. The
    /// account is written after the market's call because it needs the payout; every function
    /// that reads or writes it holds the same reentrancy lock, so no cross-function reentrancy
    /// can see it half-updated (slither does not model the transient lock).
    // slither-disable-start reentrancy-no-eth
    function redeem(address market) external nonReentrant returns (uint256 payout) {
        Position memory pos = _ledger.positions[market];
        if (pos.upUnits == 0 && pos.downUnits == 0) revert NoOpenPosition(market);
        IBinaryMarket m = IBinaryMarket(market);
        if (!m.finalized()) revert MarketNotFinal(market);
        bool upWon = m.upWins();

        // Anything that arrived before this call is a donation, not part of the payout. N and H
        // are read once here and passed on: nothing else writes them until the second settle.
        uint256 storedN = _ledger.openNotional;
        (uint256 hwm, uint256 accounted) =
            _ledger.settle(_collateral.balanceOf(address(this)), _ledger.highWaterMark, storedN);
        delete _ledger.positions[market];
        if (!pos.writtenOff) {
            _openPositions -= 1;
            // The notional leaves N and K here; the payout (if any) comes back below. Written
            // inline: a library call for it cost more than the re-read of N this saves.
            storedN -= pos.notional;
            _ledger.openNotional = storedN;
            accounted -= pos.notional;
        }

        // A losing position pays 0 and still closes: the market's redeem never reverts for it.
        // State is settled before the call; the event and the high-water mark need the payout.
        // slither-disable-next-line reentrancy-events,reentrancy-benign
        payout = m.redeem();
        _ledger.accountedEquity = accounted + payout;
        emit Settled(market, upWon, pos.upUnits, pos.downUnits, pos.notional, payout);
        // A payout that arrived short (a token fee) is a loss; a gain raises H.
        // Only its stores and events matter here.
        // slither-disable-next-line unused-return
        _ledger.settle(_collateral.balanceOf(address(this)), hwm, storedN);
    }

    // slither-disable-end reentrancy-no-eth

    /// @inheritdoc IRiskGate
    /// @dev Allowed while paused, and to anyone: it only releases a slot that is stuck. The one
    /// external call that can change state, the redeem probe, is always undone (it reverts when
    /// the redeem works) and runs under the reentrancy lock every state-changing entry holds.
    // slither-disable-start reentrancy-no-eth,reentrancy-benign
    function writeOff(address market) external nonReentrant {
        Position storage pos = _ledger.positions[market];
        if (pos.upUnits == 0 && pos.downUnits == 0) revert NoOpenPosition(market);
        if (pos.writtenOff) revert AlreadyWrittenOff(market);
        IBinaryMarket m = IBinaryMarket(market);
        uint64 expiry = m.expiry();
        uint256 allowedAfter = uint256(expiry) + _writeOffGrace;
        // The grace is an hour or more; seconds of validator skew do not matter.
        // slither-disable-start timestamp
        // forge-lint: disable-next-line(block-timestamp)
        if (block.timestamp <= allowedAfter) {
            revert WriteOffTooEarly(market, block.timestamp, allowedAfter);
        }
        // slither-disable-end timestamp
        // A final market may be written off only if it cannot pay: a redeem that works must be
        // used instead (it is tried, then undone by the revert).
        if (m.finalized()) _requireRedeemFails(m);

        // Peak equity is taken before the loss, so the loss counts against the drawdown.
        uint256 storedN = _ledger.openNotional;
        // The settled H is not needed: only the account moves below.
        // slither-disable-next-line unused-return
        (, uint256 accounted) =
            _ledger.settle(_collateral.balanceOf(address(this)), _ledger.highWaterMark, storedN);
        // The notional leaves N and K. Inline, with N read once: a library call here cost 120
        // gas (forge gas test of a write-off).
        uint256 notional = pos.notional;
        pos.writtenOff = true;
        _openPositions -= 1;
        _ledger.openNotional = storedN - notional;
        _ledger.accountedEquity = accounted - notional;
        emit WrittenOff(market, pos.upUnits, pos.downUnits, notional, expiry);
    }

    // slither-disable-end reentrancy-no-eth,reentrancy-benign

    /// @inheritdoc IRiskGate
    function deposit(uint256 amount) external nonReentrant {
        if (amount == 0) revert DepositZero();
        // Whatever arrived before is a donation; what this call brings is measured, so a token
        // that takes a fee on the way in raises H only by what the gate received.
        uint256 before = _collateral.balanceOf(address(this));
        (uint256 hwm, uint256 accounted) =
            _ledger.settle(before, _ledger.highWaterMark, _ledger.openNotional);
        _collateral.safeTransferFrom(msg.sender, address(this), amount);
        uint256 received = _collateral.balanceOf(address(this)) - before;
        // H and K both rise by what arrived. A library call for these two writes cost 72 gas
        // (forge gas test of a deposit), so they are inline.
        hwm += received;
        _ledger.highWaterMark = hwm;
        _ledger.accountedEquity = accounted + received;
        emit HighWaterMark(hwm);
        emit Deposited(msg.sender, received, hwm);
    }

    /// @inheritdoc IRiskGate
    function pause() external onlyOwner {
        _paused = true;
        emit Paused(msg.sender);
    }

    /// @inheritdoc IRiskGate
    function unpause() external onlyOwner {
        _paused = false;
        emit Unpaused(msg.sender);
    }

    /// @inheritdoc IRiskGate
    function withdrawCollateral(address to, uint256 amount) external nonReentrant onlyOwner {
        if (to == address(0)) revert ZeroAddress("to");
        uint256 balance = _collateral.balanceOf(address(this));
        (uint256 hwm, uint256 accounted) =
            _ledger.settle(balance, _ledger.highWaterMark, _ledger.openNotional);
        if (amount > balance) revert WithdrawExceedsBalance(amount, balance);
        // Money taken out is not a loss: the mark and the account drop with it, so the drawdown
        // stays the same.
        // H >= equity >= balance >= amount after settling: no underflow. A library call here
        // cost 72 gas (as one did in deposit); the two writes are inline.
        uint256 lowered = hwm - amount;
        _ledger.highWaterMark = lowered;
        _ledger.accountedEquity = accounted - amount;
        emit HighWaterMark(lowered);
        _collateral.safeTransfer(to, amount);
        emit CollateralWithdrawn(to, amount);
    }

    /// @inheritdoc IRiskGate
    function setKeeper(address newKeeper) external onlyOwner {
        if (newKeeper == address(0)) revert ZeroAddress("keeper");
        if (address(_attestorSet) != address(0) && _attestorSet.isAttestor(newKeeper)) {
            revert KeeperIsAttestor(newKeeper);
        }
        if (_isTrusted(newKeeper)) revert KeeperIsTrustedResolver(newKeeper);
        if (_isTrustedCreator(newKeeper)) revert KeeperIsTrustedCreator(newKeeper);
        emit KeeperRotated(_keeper, newKeeper);
        _keeper = newKeeper;
    }

    /// @notice Disabled: a gate without an owner could never be paused again.
    function renounceOwnership() public view override onlyOwner {
        revert RenounceDisabled();
    }

    // --- views

    /// @inheritdoc IRiskGate
    function reasonLabel(uint8) external view returns (string memory) {
        _viaViews();
    }

    /// @inheritdoc IRiskGate
    function bounds() external view returns (Params memory) {
        _viaViews();
    }

    /// @inheritdoc IRiskGate
    function trustedResolvers() external view returns (address[] memory) {
        _viaViews();
    }

    /// @inheritdoc IRiskGate
    function isTrustedResolver(address resolver) external view returns (bool) {
        return _isTrusted(resolver);
    }

    /// @inheritdoc IRiskGate
    function trustedCreators() external view returns (address[] memory) {
        _viaViews();
    }

    /// @inheritdoc IRiskGate
    function isTrustedCreator(address creator) external view returns (bool) {
        return _isTrustedCreator(creator);
    }

    /// @inheritdoc IRiskGate
    function paramsHash() external view returns (bytes32) {
        return _paramsHash;
    }

    /// @inheritdoc IRiskGate
    function gateMode() external view returns (GateMode) {
        return _mode();
    }

    /// @inheritdoc IRiskGate
    function attestorSet() external view returns (address) {
        return address(_attestorSet);
    }

    /// @inheritdoc IRiskGate
    function verdictSource() external view returns (address) {
        return _verdictSource;
    }

    /// @inheritdoc IRiskGate
    function collateral() external view returns (address) {
        return address(_collateral);
    }

    /// @inheritdoc IRiskGate
    function marketFactory() external view returns (address) {
        return address(_factory);
    }

    /// @inheritdoc IRiskGate
    function keeper() external view returns (address) {
        return _keeper;
    }

    /// @inheritdoc IRiskGate
    function paused() external view returns (bool) {
        return _paused;
    }

    /// @inheritdoc IRiskGate
    function openPositions() external view returns (uint8) {
        return _openPositions;
    }

    /// @inheritdoc IRiskGate
    function openNotional() external view returns (uint256) {
        return _ledger.openNotional;
    }

    /// @inheritdoc IRiskGate
    function highWaterMark() external view returns (uint256) {
        return _ledger.highWaterMark;
    }

    /// @inheritdoc IRiskGate
    function accountedCollateral() external view returns (uint256) {
        return _ledger.accountedEquity - _ledger.openNotional;
    }

    /// @inheritdoc IRiskGate
    function positionOf(address market) external view returns (Position memory) {
        return _ledger.positions[market];
    }

    /// @inheritdoc IRiskGate
    function snapshotOf(address market) external view returns (Snapshot memory) {
        address creator = _factory.creatorOf(market);
        if (creator == address(0)) revert UnknownMarket(market, address(_factory));
        // Zero-initialized by Solidity, then filled field by field.
        // slither-disable-next-line uninitialized-local
        Snapshot memory s;
        _readSnapshot(market, creator, s);
        // The account is not stored by a view; only H is shown.
        // slither-disable-next-line unused-return
        (s.highWaterMark,) = _ledger.settled(s.collateralAvailable, s.highWaterMark, s.openNotional);
        return s;
    }

    // --- internal

    /// @dev Answers this call with `_views`' answer to the same call data, returned or reverted
    /// as it stands (see `RiskGateViews`).
    function _viaViews() internal view {
        address views = _views;
        assembly ("memory-safe") {
            let p := mload(0x40)
            calldatacopy(p, 0, calldatasize())
            let ok := staticcall(gas(), views, p, calldatasize(), 0, 0)
            returndatacopy(p, 0, returndatasize())
            if ok { return(p, returndatasize()) }
            revert(p, returndatasize())
        }
    }

    function _mode() internal view returns (GateMode) {
        if (address(_attestorSet) != address(0)) return GateMode.Attested;
        return _verdictSource == address(0) ? GateMode.Relayed : GateMode.Consensus;
    }

    function _bounds() internal view returns (Params memory) {
        return Params({
            minPrice: _minPrice,
            maxPrice: _maxPrice,
            maxSize: _maxSize,
            minHeadroom: _minHeadroom,
            maxConcurrent: _maxConcurrent,
            maxNotional: _maxNotional,
            maxHorizon: _maxHorizon,
            maxDrawdown: _maxDrawdown,
            writeOffGrace: _writeOffGrace,
            minFillBps: _minFillBps
        });
    }

    function _checkBounds(Params memory b) internal pure {
        if (b.minPrice == 0) revert MinPriceZero();
        if (b.minPrice >= b.maxPrice) revert PriceBandEmpty(b.minPrice, b.maxPrice);
        if (b.maxPrice >= PRICE_ONE) revert MaxPriceAtCertainty(b.maxPrice, PRICE_ONE);
        if (b.maxSize == 0) revert MaxSizeZero();
        if (b.minHeadroom < MIN_HEADROOM_FLOOR) {
            revert MinHeadroomBelowFloor(b.minHeadroom, MIN_HEADROOM_FLOOR);
        }
        if (b.maxConcurrent == 0) revert MaxConcurrentZero();
        if (b.maxNotional == 0) revert MaxNotionalZero();
        if (b.maxHorizon < b.minHeadroom) {
            revert MaxHorizonBelowHeadroom(b.maxHorizon, b.minHeadroom);
        }
        if (b.maxDrawdown == 0) revert MaxDrawdownZero();
        if (b.writeOffGrace < WRITE_OFF_GRACE_FLOOR) {
            revert WriteOffGraceBelowFloor(b.writeOffGrace, WRITE_OFF_GRACE_FLOOR);
        }
        if (b.minFillBps == 0 || b.minFillBps > BPS) {
            revert MinFillBpsOutOfRange(b.minFillBps, BPS);
        }
    }

    /// @dev Strictly ascending rules out duplicates with one comparison per entry.
    function _checkResolvers(address[] memory list) internal pure {
        if (list.length == 0) revert TrustedResolversEmpty();
        if (list.length > MAX_TRUSTED_RESOLVERS) {
            revert TooManyTrustedResolvers(list.length, MAX_TRUSTED_RESOLVERS);
        }
        for (uint256 i; i < list.length; ++i) {
            if (list[i] == address(0)) revert TrustedResolverZero(i);
            if (i > 0 && list[i] <= list[i - 1]) {
                revert TrustedResolversNotAscending(i, list[i - 1], list[i]);
            }
        }
    }

    /// @dev The same rules as for resolvers, with the creators' own errors.
    function _checkCreators(address[] memory list) internal pure {
        if (list.length == 0) revert TrustedCreatorsEmpty();
        if (list.length > MAX_TRUSTED_CREATORS) {
            revert TooManyTrustedCreators(list.length, MAX_TRUSTED_CREATORS);
        }
        for (uint256 i; i < list.length; ++i) {
            if (list[i] == address(0)) revert TrustedCreatorZero(i);
            if (i > 0 && list[i] <= list[i - 1]) {
                revert TrustedCreatorsNotAscending(i, list[i - 1], list[i]);
            }
        }
    }

    /// @dev A stolen keeper key must not also decide outcomes or make trusted markets.
    function _checkKeeperUntrusted(
        address keeper_,
        address[] memory resolvers,
        address[] memory creators
    ) internal pure {
        for (uint256 i; i < resolvers.length; ++i) {
            if (resolvers[i] == keeper_) revert KeeperIsTrustedResolver(keeper_);
        }
        for (uint256 i; i < creators.length; ++i) {
            if (creators[i] == keeper_) revert KeeperIsTrustedCreator(keeper_);
        }
    }

    function _isTrustedCreator(address creator) internal view returns (bool) {
        // Unused immutables are zero, and the factory never reports a zero creator for a market.
        if (creator == address(0)) return false;
        return creator == _creator0 || creator == _creator1 || creator == _creator2
            || creator == _creator3 || creator == _creator4 || creator == _creator5
            || creator == _creator6 || creator == _creator7;
    }

    function _isTrusted(address resolver) internal view returns (bool) {
        // Unused immutables are zero, and a zero resolver is never trusted.
        if (resolver == address(0)) return false;
        return resolver == _resolver0 || resolver == _resolver1 || resolver == _resolver2
            || resolver == _resolver3 || resolver == _resolver4 || resolver == _resolver5
            || resolver == _resolver6 || resolver == _resolver7;
    }

    /// @dev Reverts `MarketRedeemable` when the market's `redeem` works for the gate (its effects
    /// go with the revert). A redeem that failed for lack of gas is not a market that cannot
    /// pay: with under 1/63 of the gas left after the call, the probe itself reverts.
    function _requireRedeemFails(IBinaryMarket m) internal {
        uint256 before = gasleft();
        // Only whether it works matters: its payout is undone with the revert.
        // slither-disable-next-line unused-return
        try m.redeem() returns (uint256) {
            revert MarketRedeemable(address(m));
        } catch {
            uint256 left = gasleft();
            if (left <= before / 63) revert RedeemProbeOutOfGas(left);
        }
    }

    /// @dev Everything comes from the market and from the gate's own state, never from calldata.
    /// Fills `s` in place rather than returning a new struct: slither's taint tracking would
    /// otherwise follow `nowSec` into every later comparison and report them all as timestamp
    /// comparisons, when only the headroom rule reads the clock.
    function _readSnapshot(address market, address creator, Snapshot memory s) internal view {
        IBinaryMarket m = IBinaryMarket(market);
        // A batch reads each element's market (calls-loop): factory-made venue code, whose views
        // do not revert; only its order can fail, and a batch isolates that (_tryIsolated).
        // slither-disable-next-line calls-loop
        IBinaryMarket.GateQuote memory q = m.gateQuote();
        s.bestBid = q.bestBid;
        s.bestAsk = q.bestAsk;
        s.tickSize = q.tickSize;
        s.lotSize = q.lotSize;
        s.minQuantity = q.minQuantity;
        s.expirySec = q.expiry;
        s.nowSec = uint64(block.timestamp);
        s.finalized = q.finalized;
        s.openPositions = _openPositions;
        s.openNotional = _ledger.openNotional;
        // slither-disable-next-line calls-loop
        s.collateralAvailable = _collateral.balanceOf(address(this));
        // slither-disable-next-line calls-loop
        s.resolverTrusted = _isTrusted(m.resolver());
        Position storage pos = _ledger.positions[market];
        if (pos.upUnits != 0) s.heldSide = Verdict.unwrap(Verdicts.BUY_UP);
        else if (pos.downUnits != 0) s.heldSide = Verdict.unwrap(Verdicts.BUY_DOWN);
        s.highWaterMark = _ledger.highWaterMark;
        s.creatorTrusted = _isTrustedCreator(creator);
    }

    /// @dev What the keeper's submissions check before anything else: the caller is the keeper,
    /// then `_admitMarket`.
    function _admit(address market, uint64 readBlock) internal view returns (address) {
        if (msg.sender != _keeper) revert NotKeeper(msg.sender, _keeper);
        return _admitMarket(market, readBlock);
    }

    /// @dev What every submission checks: the gate is not paused, `readBlock` exists, and the
    /// factory made `market`, whose creator it returns.
    function _admitMarket(address market, uint64 readBlock)
        internal
        view
        returns (address creator)
    {
        if (_paused) revert GatePaused();
        return _creatorOf(market, readBlock);
    }

    /// @dev `_admitMarket` past the pause: `readBlock` exists and the factory made `market`.
    function _creatorOf(address market, uint64 readBlock) internal view returns (address creator) {
        // A prompt cannot have been rendered from a block that does not exist yet.
        if (readBlock > block.number) revert ReadBlockInFuture(readBlock, block.number);
        // A keeper must not be able to point the gate at a look-alike market. One call answers
        // both questions: the factory made it (creator non-zero), and who asked for it.
        // Called in scratch space (no allocation), which keeps a batch's ABSTAIN near its log
        // and its cold slot: about 400 gas under the high-level call. A failed call bubbles; an
        // answer that is not one address-sized word is no creator.
        address factory = address(_factory);
        bytes4 selector = IMarketFactory.creatorOf.selector;
        assembly ("memory-safe") {
            mstore(0x00, selector)
            mstore(0x04, market)
            if iszero(staticcall(gas(), factory, 0x00, 0x24, 0x00, 0x20)) {
                let p := mload(0x40)
                returndatacopy(p, 0, returndatasize())
                revert(p, returndatasize())
            }
            creator := mload(0x00)
            if or(lt(returndatasize(), 0x20), shr(160, creator)) { creator := 0 }
        }
        if (creator == address(0)) revert UnknownMarket(market, factory);
    }

    /// @dev `submitConsensus`'s judgment as the one-field tuple `_tally` decodes: a memory copy
    /// of the arguments `(market, readBlock, judgment)`, cut to start at `readBlock`'s word, which
    /// becomes the length, with the judgment's offset (0x60 in the source's standard encoding,
    /// the only sender) rebased to 0x20.
    function _sourcedJudgment() internal pure returns (bytes memory tail) {
        bytes memory args = msg.data[4:];
        assembly ("memory-safe") {
            tail := add(args, 0x40)
            mstore(tail, sub(mload(args), 0x40))
            mstore(add(tail, 0x20), 0x20)
        }
    }

    /// @dev The attestor set's judgment of `data`, a `submitAttested` call's data (this call's,
    /// or a batch element's): `tally` takes the same arguments, so it is forwarded with only the
    /// selector changed.
    function _tally(bytes memory data) internal view returns (Judgment memory) {
        bytes4 selector = IAttestorSet.tally.selector;
        assembly ("memory-safe") {
            let word := add(data, 0x20)
            mstore(word, or(shr(32, shl(32, mload(word))), selector))
        }
        // A batch asks once per element (calls-loop): the set is the gate's own, deployed by its
        // constructor, and a revert there (a malformed element) is meant to revert the batch.
        // slither-disable-next-line calls-loop
        (bool ok, bytes memory ret) = address(_attestorSet).staticcall(data);
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(ret, 0x20), mload(ret))
            }
        }
        return abi.decode(ret, (Judgment));
    }

    /// @dev Reads, evaluates and, on PASS, executes the parsed `d.verdict`, its order `isolated`
    /// in a batch (see `_tryIsolated`). The snapshot and quote come back ABI-encoded, or empty
    /// when nothing was evaluated: 16 words of zeros would cost 4 kgas of log data on every
    /// ABSTAIN and would read like an empty book.
    function _decide(
        address market,
        address creator,
        Decided memory d,
        uint256 maxPricePaid,
        uint64 deadline,
        bool isolated
    ) internal {
        if (d.verdict == Verdicts.ABSTAIN) {
            // Nothing else is evaluated, so the book is not read.
            d.reason = Reasons.ABSTAINED;
            d.failedMask = uint32(Reasons.ABSTAINED.bit());
            return;
        }
        Quote memory quote = Quote({maxPricePaid: maxPricePaid, deadline: deadline});

        // Zero-initialized by Solidity, then filled field by field.
        // slither-disable-next-line uninitialized-local
        Snapshot memory s;
        _readSnapshot(market, creator, s);
        // The account is settled (a donation raises H by its amount) and H raised to the equity
        // seen now, before the rule reads it; H and N come from the snapshot just read (reading
        // them again cost 100 gas each). The rules read H only; settle stores the account.
        // slither-disable-next-line unused-return
        (s.highWaterMark,) = _ledger.settle(s.collateralAvailable, s.highWaterMark, s.openNotional);
        GateRules.Outcome memory o = GateRules.evaluate(_bounds(), s, quote, d.verdict);
        d.reason = o.reason;
        d.failedMask = o.failedMask;
        d.snapshot = abi.encode(s, quote);
        // A reason code, not a balance: the strict comparison is the rule.
        // slither-disable-next-line incorrect-equality
        if (o.reason == Reasons.PASS) {
            d.order.pricePaid = o.pricePaid;
            d.order.limit = o.limit;
            d.order.quantity = o.quantity;
            d.order.cost = o.cost;
            (d.reason, d.failedMask, d.order.filled, d.order.spent) =
                isolated ? _tryIsolated(market, d.verdict, o) : _tryExecute(market, d.verdict, o);
        }
    }

    /// @dev Runs the order in a self-call so that a fill below the minimum can be undone whole:
    /// the market's state, the collateral and the position all roll back with that frame. Any
    /// other revert (a market that misbehaves, an allowance short) propagates, as in v1.
    function _tryExecute(address market, Verdict verdict, GateRules.Outcome memory o)
        internal
        returns (Reason reason, uint32 failedMask, uint256 filled, uint256 spent)
    {
        // A batch never comes here (it uses _tryIsolated); slither follows the shared _decide.
        // slither-disable-next-line calls-loop
        try this.executeOrder(
            market, Verdict.unwrap(verdict), o.limit, o.quantity, o.cost
        ) returns (
            uint256 f, uint256 sp
        ) {
            return (Reasons.PASS, 0, f, sp);
        } catch (bytes memory err) {
            // Casting to bytes4 takes the selector: the first four bytes of the revert data.
            // forge-lint: disable-next-line(unsafe-typecast)
            if (err.length == 68 && bytes4(err) == FillBelowMinimum.selector) {
                (filled, spent) = _decodeFillBelowMinimum(err);
                return (
                    Reasons.FILL_BELOW_MIN,
                    uint32(1 << Reason.unwrap(Reasons.FILL_BELOW_MIN)),
                    filled,
                    spent
                );
            }
            // Re-raise anything else unchanged.
            assembly ("memory-safe") {
                revert(add(err, 0x20), mload(err))
            }
        }
    }

    /// @dev A batch element's order: `_tryExecute`'s self-call given exactly ORDER_GAS, with
    /// every failure caught, so a market that reverts or burns its gas costs the batch at most
    /// ORDER_GAS and publishes reason 24. Only a `FillBelowMinimum`'s 68 bytes are ever copied
    /// from the revert data, so revert data of any size costs nothing here. Too little gas left
    /// to give ORDER_GAS reverts the transaction: a 24 must never stand for a short gas limit
    /// (and a gas estimate then finds the limit that runs the order whole).
    function _tryIsolated(address market, Verdict verdict, GateRules.Outcome memory o)
        internal
        returns (Reason reason, uint32 failedMask, uint256 filled, uint256 spent)
    {
        uint256 left = gasleft();
        if (left < ORDER_GAS_NEEDED) revert OrderGasShort(left, ORDER_GAS_NEEDED);
        // One order per passing element (calls-loop), each capped and caught.
        // slither-disable-next-line calls-loop
        try this.executeOrder{gas: ORDER_GAS}(
            market, Verdict.unwrap(verdict), o.limit, o.quantity, o.cost
        ) returns (
            uint256 f, uint256 sp
        ) {
            return (Reasons.PASS, 0, f, sp);
        } catch {
            bool below;
            bytes4 selector = FillBelowMinimum.selector;
            assembly ("memory-safe") {
                if eq(returndatasize(), 68) {
                    let p := mload(0x40)
                    returndatacopy(p, 0, 68)
                    if eq(shr(224, mload(p)), shr(224, selector)) {
                        below := 1
                        filled := mload(add(p, 0x04))
                        spent := mload(add(p, 0x24))
                    }
                }
            }
            if (below) {
                return (Reasons.FILL_BELOW_MIN, uint32(Reasons.FILL_BELOW_MIN.bit()), filled, spent);
            }
            return (Reasons.ORDER_FAILED, uint32(Reasons.ORDER_FAILED.bit()), 0, 0);
        }
    }

    /// @dev Reads the two words after the selector of `FillBelowMinimum(filled, spent)`.
    function _decodeFillBelowMinimum(bytes memory err)
        internal
        pure
        returns (uint256 filled, uint256 spent)
    {
        assembly ("memory-safe") {
            filled := mload(add(err, 0x24))
            spent := mload(add(err, 0x44))
        }
    }

    /// @dev A relayed gate has no signers, no source and every setting 0; an attested one 1 to
    /// MAX_ATTESTORS strictly ascending non-zero signers, none the keeper, 1 <= k <= n, no
    /// source, a read age of at least one block and a slippage of at most 100 %; a consensus one
    /// a source made for this gate, no signers, no threshold, and the same read age and slippage.
    function _checkAttestors(Attestors memory a, address keeper_, address source) internal view {
        uint256 n = a.signers.length;
        if (source != address(0)) {
            if (n != 0 || a.threshold != 0) revert SourceWithAttestors(n, a.threshold);
            if (source.code.length == 0) revert VerdictSourceForAnotherGate(source, address(0));
            IVerdictSource src = IVerdictSource(source);
            address made = src.gate();
            if (made != address(this)) revert VerdictSourceForAnotherGate(source, made);
            _checkReadBounds(a);
            (uint32 age, uint16 slip) = (src.maxReadAge(), src.maxSlippageBps());
            if (age != a.maxReadAge || slip != a.maxSlippageBps) {
                revert SourceBoundsMismatch(a.maxReadAge, a.maxSlippageBps, age, slip);
            }
            return;
        }
        if (n == 0) {
            if (a.threshold != 0 || a.maxReadAge != 0 || a.maxSlippageBps != 0) {
                revert RelayedGateSettings(a.threshold, a.maxReadAge, a.maxSlippageBps);
            }
            return;
        }
        if (n > MAX_ATTESTORS) revert TooManyAttestors(n, MAX_ATTESTORS);
        for (uint256 i; i < n; ++i) {
            address who = a.signers[i];
            if (who == address(0)) revert AttestorZero(i);
            if (i > 0 && who <= a.signers[i - 1]) {
                revert AttestorsNotAscending(i, a.signers[i - 1], who);
            }
            if (who == keeper_) revert KeeperIsAttestor(keeper_);
        }
        if (a.threshold == 0 || a.threshold > n) revert ThresholdOutOfRange(a.threshold, n);
        _checkReadBounds(a);
    }

    /// @dev The bounds on an attested or sourced read: at least one block, at most 100 %.
    function _checkReadBounds(Attestors memory a) internal pure {
        if (a.maxReadAge == 0) revert MaxReadAgeZero();
        if (a.maxSlippageBps > BPS) revert MaxSlippageBpsOutOfRange(a.maxSlippageBps, BPS);
    }

    /// @dev Emits `Decision`, encoded here rather than by Solidity's event encoder: the same
    /// bytes (every test that expects a Decision compares them with Solidity's own encoding), for
    /// about 1,000 gas less, which is most of what an ABSTAIN costs beyond its log. The data are
    /// fourteen head words (readBlock, verdict, failedMask, the snapshot's offset, the order's six
    /// words, rawHead's offset, rawLength, rawHash, vote's offset), then the three byte strings,
    /// each its length and its bytes zero-padded to a whole word.
    function _publish(
        address market,
        bytes32 promptHash,
        uint64 readBlock,
        Decided memory d,
        bytes memory rawHead,
        uint256 rawLength,
        bytes32 rawHash,
        bytes memory vote
    ) internal {
        bytes32 topic = Decision.selector;
        // `d` in memory: verdict, reason, failedMask, then pointers to snapshot and order.
        assembly ("memory-safe") {
            let p := mload(0x40)
            mstore(p, readBlock)
            mstore(add(p, 0x20), mload(d))
            mstore(add(p, 0x40), mload(add(d, 0x40)))
            mcopy(add(p, 0x80), mload(add(d, 0x80)), 0xc0)
            mstore(add(p, 0x160), rawLength)
            mstore(add(p, 0x180), rawHash)
            // Appends `b` at `end` (its length word, then its bytes padded with zeros), writes
            // its offset into head word `slot`, and returns the new end.
            function append(base, end, slot, b) -> next {
                mstore(add(base, slot), end)
                let n := mload(b)
                let at := add(base, end)
                let padded := and(add(n, 0x1f), not(0x1f))
                // The padding word first: the copy then overwrites all but its tail.
                mstore(add(at, padded), 0)
                mcopy(at, b, add(0x20, n))
                next := add(end, add(0x20, padded))
            }
            let end := append(p, 0x1c0, 0x60, mload(add(d, 0x60)))
            end := append(p, end, 0x140, rawHead)
            end := append(p, end, 0x1a0, vote)
            log4(p, end, topic, market, promptHash, mload(add(d, 0x20)))
        }
    }
}
