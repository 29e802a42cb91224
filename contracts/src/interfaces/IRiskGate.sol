// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title IRiskGate
/// @notice An immutable risk gate between a language model and a binary market. The model may
/// only answer `BUY_UP`, `BUY_DOWN` or `ABSTAIN`; the gate parses that answer strictly, reads the
/// live book itself, and derives price and size from the book and from bounds fixed at deploy.
/// Nobody, the owner included, can change the bounds. Every decision, refusals included, is
/// published as one `Decision` event carrying a stable reason code.
/// @dev Units: prices are probabilities in 1e6 units (1_000_000 = 1.0). A quantity is collateral
/// base units of payout: quantity q pays q base units if its side wins.
///
/// v2.1 bounds the loss over the gate's whole life, not only each order or funding episode:
/// - only markets whose resolver is in the deploy-fixed `trustedResolvers` (rule 12) and whose
///   creator is in the deploy-fixed `trustedCreators` (rule 19) are traded;
/// - a high-water mark `H` of equity (collateral balance + open notional) is kept, and no order
///   may take the balance below `H - maxDrawdown` (rule 14);
/// - the gate keeps its own account of the equity it should hold. Money that arrives any other
///   way than a payout of one of its markets (a `deposit`, a plain transfer) raises `H` by exactly
///   its amount, a withdrawal lowers it by exactly its amount, and a balance below the account
///   (a token fee, a clawback) is a loss. So no money movement changes `H - equity`, and
///   `H - equity <= maxDrawdown` holds for the gate's whole life: a gate that has used its
///   drawdown stays stopped;
/// - the keeper's `Quote` can only tighten the order's limit, never loosen it (rules 15, 16);
/// - a position whose market never resolves can be written off by anyone after
///   `expiry + writeOffGrace`, freeing its slot and counting it as lost.
interface IRiskGate {
    /// @notice The bounds, fixed at deploy as immutables.
    struct Params {
        uint256 minPrice; // lowest price paid for the token bought, 1e6 units
        uint256 maxPrice; // highest price paid for the token bought, 1e6 units, < 1e6
        uint256 maxSize; // quantity per order before lot snapping
        uint32 minHeadroom; // seconds that must remain before expiry, >= MIN_HEADROOM_FLOOR
        uint8 maxConcurrent; // open positions allowed at once
        uint256 maxNotional; // collateral at risk across open positions
        uint32 maxHorizon; // the longest `expiry - now` accepted, seconds, >= minHeadroom
        uint256 maxDrawdown; // collateral units the balance may fall below the high-water mark
        uint32 writeOffGrace; // seconds after expiry before an unresolved position is written off
        uint16 minFillBps; // smallest fill kept, in basis points of the order's quantity, 1..10000
    }

    /// @notice The keeper's bound on one answer. It can only tighten what the gate would do.
    /// Not looked at for ABSTAIN and unparseable answers.
    struct Quote {
        uint256 maxPricePaid; // worst price accepted for the token bought, 1e6 units
        uint64 deadline; // chain time (seconds) after which the answer is stale
    }

    /// @notice One decision of a `submitVerdicts` batch: `submitVerdict`'s arguments.
    struct Submission {
        address market;
        string raw;
        bytes32 promptHash;
        uint64 readBlock;
        Quote quote;
    }

    /// @notice What `evaluate` looks at. Bids and asks are UP prices on one shared book.
    struct Snapshot {
        uint256 bestBid;
        uint256 bestAsk;
        uint256 tickSize; // 0 = no grid
        uint256 lotSize; // 0 = no grid
        uint256 minQuantity;
        uint64 expirySec;
        uint64 nowSec;
        bool finalized;
        uint8 openPositions;
        uint256 openNotional;
        uint256 collateralAvailable;
        bool resolverTrusted; // the market's resolver() is one of trustedResolvers
        uint8 heldSide; // the gate's position in this market: 0 none, 1 UP, 2 DOWN
        uint256 highWaterMark; // H; submitVerdict settles its account and raises H first
        bool creatorTrusted; // the factory's creatorOf(market) is one of trustedCreators
    }

    /// @notice The order a decision produced; all zero on a refusal other than reason 18. On
    /// reason 18 `filled` and `spent` are what the market offered and the gate undid: nothing
    /// moved. The average price paid is `ceil(spent * 1e6 / filled)`; `pricePaid` is only the
    /// best level's.
    struct Order {
        uint256 pricePaid; // best level's price for the token bought, 1e6 units (not the average)
        uint256 limit; // the order's limit for the token bought: min(maxPrice, maxPricePaid) on grid
        uint256 quantity; // lot-snapped maxSize sent to the market
        uint256 cost; // worst case, ceil(quantity * limit / 1e6)
        uint256 filled; // units actually bought (immediate-or-cancel)
        uint256 spent; // collateral actually spent; open notional grows by exactly this
    }

    /// @notice How the gate takes answers, fixed at deploy for its whole life. No signers and no
    /// verdict source: the gate is **relayed** (the keeper submits one answer with
    /// `submitVerdict`) and every other field is 0. Signers: it is **attested**, only
    /// `submitAttested` is accepted, and an answer counts only when `threshold` of these signers
    /// gave it. A verdict source (the constructor's last argument): it is **consensus**, only
    /// `submitConsensus` from that source is accepted, there are no signers and no threshold,
    /// and `maxReadAge` and `maxSlippageBps` bound the source's reads as they bound attested ones.
    struct Attestors {
        address[] signers; // strictly ascending, 1 to MAX_ATTESTORS, never the keeper
        uint8 threshold; // k: attestors that must give the same verdict, 1 <= k <= signers
        uint32 maxReadAge; // blocks a `readBlock` may lie behind the block the call is mined in
        uint16 maxSlippageBps; // above the attested best price of the side bought, in bps of it
    }

    /// @notice What every attestor of one decision signed besides its own answer and the quote's
    /// deadline: the prompt's hash and the best bid and ask (UP prices) it read at `readBlock`.
    /// It travels once per call, ABI-encoded (three words) after `submitAttested`'s arguments,
    /// as ERC-2771 appends a sender: the function's signature stays the one pinned.
    struct AttestedRead {
        bytes32 promptHash;
        uint256 bestBid;
        uint256 bestAsk;
    }

    /// @notice One attested call judged (see `IAttestorSet.tally`), or one consensus request
    /// judged by the gate's verdict source (see `submitConsensus`).
    struct Judgment {
        uint8 reason; // 0, or the refusal: 21 or 22 from a set; 11, 22 or 23 from a source
        uint8 verdict; // the verdict taken; VERDICT_INVALID when none
        uint256 limit; // with reason 0: the most the gate may pay for the side bought
        bytes32 promptHash; // the attested prompt's hash
        bytes head; // the shown answer's first RAW_HEAD_BYTES bytes
        uint256 length; // its length
        bytes32 hash; // its keccak256
        bytes vote; // the Decision's `vote`
    }

    /// @notice A gate's mode, fixed at deploy: relayed or attested (see `Attestors`), or
    /// **consensus** when a verdict source is named (see `submitConsensus`).
    enum GateMode {
        Relayed,
        Attested,
        Consensus
    }

    /// @notice The gate's exposure in one market.
    struct Position {
        uint256 upUnits;
        uint256 downUnits;
        uint256 notional; // collateral actually spent
        bool writtenOff; // slot and notional already released by `writeOff`; the claim is kept
    }

    // --- constructor validation: each names the field and the value

    error MinPriceZero();
    error PriceBandEmpty(uint256 minPrice, uint256 maxPrice);
    error MaxPriceAtCertainty(uint256 maxPrice, uint256 ceiling);
    error MaxSizeZero();
    error MinHeadroomBelowFloor(uint32 minHeadroom, uint32 floor);
    error MaxConcurrentZero();
    error MaxNotionalZero();
    error ZeroAddress(string field);
    error MaxHorizonBelowHeadroom(uint32 maxHorizon, uint32 minHeadroom);
    error MaxDrawdownZero();
    error WriteOffGraceBelowFloor(uint32 writeOffGrace, uint32 floor);
    error MinFillBpsOutOfRange(uint16 minFillBps, uint16 max);
    error TrustedResolversEmpty();
    error TooManyTrustedResolvers(uint256 count, uint256 max);
    error TrustedResolverZero(uint256 index);
    error TrustedResolversNotAscending(uint256 index, address previous, address current);
    error TrustedCreatorsEmpty();
    error TooManyTrustedCreators(uint256 count, uint256 max);
    error TrustedCreatorZero(uint256 index);
    error TrustedCreatorsNotAscending(uint256 index, address previous, address current);
    /// @notice The keeper key may never be a trusted resolver or creator: a stolen keeper key
    /// would then also decide outcomes or make markets the gate trades (constructor, setKeeper).
    error KeeperIsTrustedResolver(address keeper);
    error KeeperIsTrustedCreator(address keeper);
    error FactoryCollateralMismatch(address factoryCollateral, address collateral);
    error TooManyAttestors(uint256 count, uint256 max);
    error AttestorZero(uint256 index);
    error AttestorsNotAscending(uint256 index, address previous, address current);
    error ThresholdOutOfRange(uint8 threshold, uint256 attestors);
    error MaxReadAgeZero();
    error MaxSlippageBpsOutOfRange(uint16 maxSlippageBps, uint16 max);
    /// @notice A relayed gate (no signers) named attested settings: each must be 0.
    error RelayedGateSettings(uint8 threshold, uint32 maxReadAge, uint16 maxSlippageBps);
    /// @notice The keeper key may never be an attestor: a stolen keeper key would then also
    /// hold one of the `k` signatures (constructor, setKeeper).
    error KeeperIsAttestor(address keeper);
    /// @notice A consensus gate (one naming a verdict source) names no signers and no
    /// threshold: its answers come from its source alone.
    error SourceWithAttestors(uint256 attestors, uint8 threshold);
    /// @notice The verdict source was made for another gate (its `gate()`), or holds no code.
    error VerdictSourceForAnotherGate(address source, address gate);
    /// @notice The consensus gate's read bounds (its `Attestors` setting) differ from those its
    /// verdict source applies.
    error SourceBoundsMismatch(
        uint32 maxReadAge, uint16 maxSlippageBps, uint32 sourceMaxReadAge, uint16 sourceSlippageBps
    );

    // --- operation

    /// @notice `raw` is not exactly one of the three tokens after trimming. `length` is the raw
    /// length in bytes and `head` its first 32 bytes (read in place, never copied).
    error UnknownVerdict(uint256 length, bytes32 head);
    error NotKeeper(address caller, address keeper);
    error GatePaused();
    error UnknownMarket(address market, address factory);
    error NoOpenPosition(address market);
    error MarketNotFinal(address market);
    /// @notice `writeOff` of a final market whose `redeem` works: call `redeem` instead.
    error MarketRedeemable(address market);
    /// @notice `writeOff` saw the market's `redeem` fail for lack of gas, not because it cannot
    /// pay; retry with more gas.
    error RedeemProbeOutOfGas(uint256 gasLeft);
    error DepositZero();
    error WithdrawExceedsBalance(uint256 amount, uint256 balance);
    error WriteOffTooEarly(address market, uint256 nowSec, uint256 allowedAfterSec);
    error AlreadyWrittenOff(address market);
    error RenounceDisabled();
    error UnknownReason(uint8 reason);
    /// @notice The market returned more than was asked for; the whole call reverts.
    error FillOutOfBounds(uint256 filled, uint256 quantity, uint256 spent, uint256 cost);
    /// @notice Internal: the fill was below `minFillBps` and is undone. Never escapes
    /// `submitVerdict`, which catches it and publishes reason 18.
    error FillBelowMinimum(uint256 filled, uint256 spent);
    /// @notice `executeOrder` is the gate's own self-call.
    error OnlySelf(address caller);
    /// @notice `submitVerdict` named a `readBlock` (the block the keeper read the book at) above
    /// the block it is mined in: the keeper's bug, not a decision.
    error ReadBlockInFuture(uint64 readBlock, uint256 currentBlock);
    /// @notice The submission does not fit the gate's mode, named here: an attested gate refuses
    /// `submitVerdict` (the keeper cannot bypass its attestors), a relayed one `submitAttested`.
    error WrongGateMode(GateMode mode);
    /// @notice `submitAttested` needs one signature per answer, and at most MAX_ATTESTORS (8)
    /// answers: more would repeat a signer.
    error AttestationShape(uint256 answers, uint256 signatures);
    /// @notice `submitAttested`'s call data must end with the `AttestedRead` after its arguments:
    /// they end at `argumentsEnd`, the call data at `callEnd`.
    error AttestedReadMissing(uint256 argumentsEnd, uint256 callEnd);
    /// @notice `submitConsensus` came from someone other than the gate's verdict source.
    error NotVerdictSource(address caller, address source);
    /// @notice `submitVerdicts` or `submitAttestedVerdicts` was given no element.
    error BatchEmpty();
    /// @notice A `submitAttestedVerdicts` element of `length` bytes is shorter than the fixed
    /// head of `submitAttested`'s arguments (`needed` bytes: market, readBlock, two offsets and
    /// the quote).
    error AttestedElementShort(uint256 index, uint256 length, uint256 needed);
    /// @notice A batch element's order would have started with `gasLeft`, under the `needed`
    /// that ORDER_GAS takes (the EVM passes at most 63/64 of what is left).
    error OrderGasShort(uint256 gasLeft, uint256 needed);

    // ---

    /// @notice Emitted once, at deploy: the bounds, the trusted resolvers and creators, the
    /// mode's attestors and verdict source, and their hash,
    /// `keccak256(abi.encode(params, trustedResolvers, trustedCreators, attestors,
    /// verdictSource))`.
    event GateDeployed(
        bytes32 indexed paramsHash,
        Params params,
        address[] trustedResolvers,
        address[] trustedCreators,
        address collateral,
        address marketFactory,
        address keeper,
        Attestors attestors,
        address verdictSource
    );

    /// @notice One decision. A reader can rebuild the whole feed row from this event alone.
    /// @param readBlock The block whose book and timestamp the prompt was rendered from, as the
    /// keeper named it; never above the block of this event.
    /// @param verdict 0 ABSTAIN, 1 BUY_UP, 2 BUY_DOWN, VERDICT_INVALID when `raw` did not parse.
    /// @param snapshot Everything `evaluate` was given: `abi.encode(Snapshot, Quote)` with the
    /// snapshot the gate read and the keeper's quote, or empty when nothing was evaluated
    /// (ABSTAIN and unparseable answers evaluate nothing else, so neither the book nor the quote
    /// is looked at; an empty field says so, where zeros would look like an empty book).
    /// @param order Price, limit, quantity and worst-case cost, and what filled and was spent.
    /// @param rawHead The first `RAW_HEAD_BYTES` (64) bytes of the model's answer, verbatim
    /// (bytes, since a cut may split a UTF-8 character). Every parseable answer fits whole.
    /// @param rawLength The answer's full length in bytes.
    /// @param rawHash `keccak256` of the whole answer, so a published full text can be checked.
    /// The whole answer is never logged: a hostile 100 KB answer costs only calldata and hashing.
    /// On an attested gate the raw fields are those of the first answer giving the verdict taken
    /// (the first answer sent, on reasons 21 and 22).
    /// On a consensus gate they are those of the answer the validators agreed on (the first
    /// successful one when none was agreed on).
    /// @param vote Empty on a relayed gate. On an attested or consensus gate, packed so that logging it stays
    /// cheap: the count per verdict, one byte each (ABSTAIN, BUY_UP, BUY_DOWN, unparseable),
    /// then for each answer in the order sent: its signer (20 bytes; 0 when the signature did
    /// not recover), its length (uint32, 4 bytes), its keccak256 (32 bytes: the signed
    /// `answerHash`) and its first min(length, RAW_HEAD_BYTES) bytes, verbatim. On a consensus
    /// gate the entries are the validators' successful responses, in the platform's order, each
    /// validator in the signer's place and its decoded answer in the answer's.
    event Decision(
        address indexed market,
        bytes32 indexed promptHash,
        uint64 readBlock,
        uint8 indexed reason,
        uint8 verdict,
        uint32 failedMask,
        bytes snapshot,
        Order order,
        bytes rawHead,
        uint256 rawLength,
        bytes32 rawHash,
        bytes vote
    );

    /// @notice A position closed after its market finalized. `payout` is 0 for a loss.
    event Settled(
        address indexed market,
        bool upWon,
        uint256 upUnits,
        uint256 downUnits,
        uint256 notional,
        uint256 payout
    );

    /// @notice A position whose market did not finalize by `expiry + writeOffGrace` was counted
    /// as lost: its slot and notional are released. The claim stays; `redeem` still collects.
    event WrittenOff(
        address indexed market, uint256 upUnits, uint256 downUnits, uint256 notional, uint64 expiry
    );

    /// @notice The high-water mark changed (raised to equity, raised by a deposit or donation,
    /// or lowered by a withdrawal).
    event HighWaterMark(uint256 highWaterMark);

    /// @notice `amount` arrived through `deposit` (what the gate's balance grew by) and raised
    /// `H` by exactly that: a top-up never refills the drawdown budget.
    event Deposited(address indexed from, uint256 amount, uint256 highWaterMark);

    /// @notice Collateral the gate's account did not expect (a plain transfer, a rebase) was
    /// found and counted as a deposit: `H` rose by exactly `amount`.
    event Donated(uint256 amount, uint256 highWaterMark);

    /// @notice The gate holds less collateral than its account says (a token fee, a clawback):
    /// the difference is a loss, counted against the drawdown.
    event Shortfall(uint256 accounted, uint256 balance);

    event KeeperRotated(address indexed previousKeeper, address indexed newKeeper);
    event Paused(address indexed by);
    event Unpaused(address indexed by);
    event CollateralWithdrawn(address indexed to, uint256 amount);

    // ---

    /// @notice Strict parse: trims, from both ends and repeatedly, exactly the bytes space, tab,
    /// LF, CR, `"` and `'`; then matches `ABSTAIN` (0), `BUY_UP` (1) or `BUY_DOWN` (2) exactly and
    /// case-sensitively. Anything else, and any input longer than 64 bytes, reverts
    /// `UnknownVerdict`.
    function parseVerdict(string calldata raw) external pure returns (uint8 verdict);

    /// @notice The pure decision rule. Never reverts for any input the ABI decoder accepts: a
    /// `verdict` word above 255 is rejected by the decoder before this runs, while the
    /// snapshot's and quote's narrow fields are masked to their width, never rejected.
    /// @dev Rules, each a bit of `failedMask` (reason = lowest failing code, 0 = PASS):
    /// 1 ABSTAIN (nothing else evaluated); 2 finalized; 3 `expirySec <= nowSec` or fewer than
    /// `minHeadroom` seconds left; 4 the side needed is empty (bestAsk 0 for BUY_UP, bestBid 0 for
    /// BUY_DOWN); 5 price paid outside [minPrice, maxPrice] (when the side is non-empty; a book
    /// value >= 1e6 is outside every band); 6 quantity 0; 7 `0 < quantity < minQuantity`;
    /// 8 `openPositions >= maxConcurrent`; 9 `openNotional + cost > maxNotional`;
    /// 10 `cost > collateralAvailable`; 11 a verdict code other than 0, 1, 2 (nothing else
    /// evaluated); 12 `!resolverTrusted`; 13 `expirySec > nowSec` and
    /// `expirySec - nowSec > maxHorizon`; 14 `H - (collateralAvailable - cost) > maxDrawdown`
    /// with `H = max(highWaterMark, collateralAvailable + openNotional)` (saturating sum), computed
    /// exactly, without overflow or underflow; 15 `pricePaid > maxPricePaid` (when the side is
    /// non-empty); 16 `nowSec > deadline`; 17 `heldSide` is neither 0 nor the verdict's side
    /// (a value above 2 fails both sides); 19 `!creatorTrusted`; 20 `quantity > 0` and the most
    /// one IOC can fill against orders of at least `m = max(minQuantity, lotSize, 1)` units within
    /// the venue's match cap, `MAX_MATCHES_PER_TAKE * m` (64 * m), is below the minimum fill:
    /// `64 * m < quantity` and `64 * m * 10000 < quantity * minFillBps`. Rules 9, 10 and 14 are
    /// evaluated when the side is non-empty and quantity > 0. 18 (fill below minimum) is decided
    /// only by `submitVerdict`.
    ///
    /// Prices: BUY_UP pays `bestAsk` rounded up onto the tick grid. BUY_DOWN pays `1e6 - bestBid`
    /// with the bid rounded down onto the grid. A book value >= 1e6 is not rounded: BUY_UP pays it
    /// as it stands, BUY_DOWN pays 0 (saturating). quantity = maxSize rounded down onto the lot
    /// grid. The limit: L = min(maxPrice, maxPricePaid); BUY_UP limit = L rounded down onto the
    /// grid; BUY_DOWN limit = 1e6 - (1e6 - L rounded up onto the grid), saturating at 0.
    /// cost = ceil(quantity * limit / 1e6), saturating at 2^256-1: the most the order can spend.
    /// A tick or lot of 0 means no grid.
    function evaluate(Snapshot calldata s, Quote calldata q, uint8 verdict)
        external
        view
        returns (uint8 reason, uint32 failedMask, uint256 pricePaid, uint256 quantity, uint256 cost);

    /// @notice Parses `raw`, reads `market` and the gate's own state, settles the gate's account
    /// (a surplus is a donation, a deficit a loss), raises the high-water mark to the current
    /// equity, evaluates, and on PASS buys immediate-or-cancel at the order's
    /// limit. A fill below `minFillBps` of the quantity is undone entirely and published as
    /// reason 18. Keeper only; the market must come from the immutable factory. An unparseable
    /// `raw` is a published reason-11 row. `readBlock` is the block the prompt was rendered from
    /// (published with the decision so anyone can re-render it); one above the current block
    /// reverts `ReadBlockInFuture`. A relayed gate's only submission: another gate reverts
    /// `WrongGateMode`.
    function submitVerdict(
        address market,
        string calldata raw,
        bytes32 promptHash,
        uint64 readBlock,
        Quote calldata quote
    ) external returns (uint8 reason);

    /// @notice `submitVerdict` for each element of `batch` in order, in one transaction: each
    /// element is decided against the state the earlier ones left (slots, notional, account,
    /// positions) and publishes its own `Decision`, and its reason is returned at its index.
    /// Elements are isolated from the market and the model: an order whose market call reverts,
    /// or needs more than ORDER_GAS, buys nothing and is published as reason 24 (the single call
    /// would revert instead), and memory is released after each element, so one long answer
    /// costs only its own element. A transaction that leaves under ORDER_GAS for an order reverts
    /// `OrderGasShort` whole rather than publish a 24 that more gas would have avoided. What a
    /// single call refuses to take at all (not the keeper, paused, an unknown market, a future
    /// `readBlock`) reverts the whole batch; so does an empty one (`BatchEmpty`).
    function submitVerdicts(Submission[] calldata batch) external returns (uint8[] memory reasons);

    /// @notice The attested gate's submission: the same decision as `submitVerdict`, on answers
    /// the attestors signed. The call data is this function's ABI encoding followed by
    /// `abi.encode(AttestedRead)` (see there). Attestor `i` signs, EIP-712 (domain: name
    /// "RiskGate", version "2", the chain id, this gate), `Answer(market, readBlock,
    /// read.promptHash, keccak256(bytes(raws[i])), read.bestBid, read.bestAsk, quote.deadline)`.
    /// Keeper only. Reason 21 (answer not attested): a signature that does not recover to an
    /// attestor, signers not strictly ascending, fewer than `threshold` answers, `readBlock`
    /// more than `maxReadAge` blocks old, or not above the last attested `readBlock` of this
    /// market (so each `(market, readBlock)` is used at most once). Reason 22 (attestors
    /// disagree): no verdict, or more than one, was given by `threshold` attestors. Otherwise the
    /// verdict taken is decided as `submitVerdict` would, with the quote's `maxPricePaid`
    /// tightened to the attested best price of the side bought plus `maxSlippageBps` of it. The
    /// published `promptHash` is the attested one. Reverts `AttestationShape` unless there is
    /// one signature per answer, at most MAX_ATTESTORS, and the read is appended.
    function submitAttested(
        address market,
        uint64 readBlock,
        string[] calldata raws,
        bytes[] calldata sigs,
        Quote calldata quote
    ) external returns (uint8 reason);

    /// @notice `submitAttested` for each element of `batch` in order, in one transaction, as
    /// `submitVerdicts` does for `submitVerdict`: each element is exactly the call data of one
    /// `submitAttested` after its selector (the ABI-encoded arguments, then the `AttestedRead`),
    /// so attestors sign the same `Answer` for a batch as for a single call, and the attestor
    /// set judges each element as that call. Each element is decided against the state the
    /// earlier ones left (including the last attested `readBlock` of its market, so one
    /// `(market, readBlock)` twice in a batch is taken once, then reason 21) and publishes its
    /// own `Decision`; an order is isolated as in `submitVerdicts` (reason 24, `OrderGasShort`).
    /// What a single call refuses to take at all (not the keeper, paused, an unknown market, a
    /// future `readBlock`, an element the set cannot read: `AttestationShape`,
    /// `AttestedReadMissing`, or one shorter than its fixed head) reverts the whole batch; so
    /// does an empty one (`BatchEmpty`). An attested gate's only batch: another reverts
    /// `WrongGateMode`.
    function submitAttestedVerdicts(bytes[] calldata batch)
        external
        returns (uint8[] memory reasons);

    /// @notice The consensus gate's only submission, from its immutable verdict source, which
    /// built the prompt on chain at `readBlock` and counted the validators' answers itself: the
    /// judgment is the source's, in the shape an attestor set gives (see `IAttestorSet.tally`),
    /// with `reason` 0, 11 (agreed on no valid verdict), 22 (validators disagree) or 23 (no
    /// consensus in time: the platform timed out or failed, or the answer came more than
    /// `maxReadAge` blocks after the read), and on 0 the `limit`: the read's best price of the
    /// side bought plus `maxSlippageBps` of it. The gate decides the verdict as `submitVerdict`
    /// would with that limit and this block's time as the deadline, and publishes every other
    /// reason as it stands. Source only (`NotVerdictSource`); a relayed or attested gate reverts
    /// `WrongGateMode`; paused, an unknown market or a future `readBlock` revert as in
    /// `submitVerdict`.
    function submitConsensus(address market, uint64 readBlock, Judgment calldata judgment)
        external
        returns (uint8 reason);

    /// @notice Internal self-call that executes a passed order so that a fill below the minimum
    /// can be undone by reverting. Only the gate itself may call it.
    function executeOrder(
        address market,
        uint8 verdict,
        uint256 limit,
        uint256 quantity,
        uint256 cost
    ) external returns (uint256 filled, uint256 spent);

    /// @notice Closes the gate's position in a final market, collecting any payout, then raises
    /// the high-water mark to the equity after settlement. Anyone may call it; a losing position
    /// closes with payout 0. A written-off position only collects (its slot is already free).
    function redeem(address market) external returns (uint256 payout);

    /// @notice Counts a position as lost once `now > expiry + writeOffGrace` if its market has
    /// not finalized, or has finalized but its `redeem` reverts (a market that cannot pay):
    /// settles the account and raises the high-water mark to the equity before the loss, then
    /// releases the slot and the notional. Anyone may call it, paused or not. The claim stays
    /// for `redeem`.
    function writeOff(address market) external;

    /// @notice Anyone may fund the gate: pulls `amount` of collateral from the caller and raises
    /// `H` by what arrived, so a top-up never refills the drawdown budget. Allowed while paused.
    function deposit(uint256 amount) external;

    function pause() external;
    function unpause() external;
    /// @notice Sends collateral out and lowers the high-water mark by exactly `amount`, after
    /// settling the account and raising the mark to the equity before the withdrawal.
    function withdrawCollateral(address to, uint256 amount) external;
    function setKeeper(address newKeeper) external;

    // --- views

    function reasonLabel(uint8 reason) external view returns (string memory);
    function bounds() external view returns (Params memory);
    function trustedResolvers() external view returns (address[] memory);
    function isTrustedResolver(address resolver) external view returns (bool);
    function trustedCreators() external view returns (address[] memory);
    function isTrustedCreator(address creator) external view returns (bool);
    function paramsHash() external view returns (bytes32);
    function gateMode() external view returns (GateMode);
    /// @notice The attested gate's `IAttestorSet`, deployed by its constructor: its signers,
    /// settings and EIP-712 domain. Zero on a relayed gate.
    function attestorSet() external view returns (address);
    /// @notice The consensus gate's verdict source, fixed at deploy. Zero on other gates.
    function verdictSource() external view returns (address);
    function collateral() external view returns (address);
    function marketFactory() external view returns (address);
    function keeper() external view returns (address);
    function paused() external view returns (bool);
    function openPositions() external view returns (uint8);
    function openNotional() external view returns (uint256);
    /// @notice H as stored: the peak of equity, plus every deposit and donation since, minus every
    /// withdrawal.
    function highWaterMark() external view returns (uint256);
    /// @notice The collateral the gate's own account says it holds (as of the last settlement);
    /// the balance above it is an uncounted donation, below it a loss.
    function accountedCollateral() external view returns (uint256);
    function positionOf(address market) external view returns (Position memory);
    /// @notice The snapshot `submitVerdict` would evaluate for `market` right now (with the
    /// high-water mark it would store first).
    function snapshotOf(address market) external view returns (Snapshot memory);
}
