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
interface IRiskGate {
    /// @notice The bounds, fixed at deploy as immutables.
    struct Params {
        uint256 minPrice; // lowest price paid for the token bought, 1e6 units
        uint256 maxPrice; // highest price paid for the token bought, 1e6 units, < 1e6
        uint256 maxSize; // quantity per order before lot snapping
        uint32 minHeadroom; // seconds that must remain before expiry, >= MIN_HEADROOM_FLOOR
        uint8 maxConcurrent; // open positions allowed at once
        uint256 maxNotional; // collateral at risk across open positions
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
    }

    /// @notice The order a decision produced; all zero on a refusal.
    struct Order {
        uint256 pricePaid; // per unit of the token bought, 1e6 units
        uint256 quantity; // lot-snapped maxSize sent to the market
        uint256 cost; // worst case, ceil(quantity * pricePaid / 1e6)
        uint256 filled; // units actually bought (immediate-or-cancel)
        uint256 spent; // collateral actually spent; open notional grows by exactly this
    }

    /// @notice The gate's open exposure in one market.
    struct Position {
        uint256 upUnits;
        uint256 downUnits;
        uint256 notional; // collateral actually spent, released on redeem
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

    // --- operation

    /// @notice `raw` is not exactly one of the three tokens after trimming. `length` is the raw
    /// length in bytes and `head` its first 32 bytes (read in place, never copied).
    error UnknownVerdict(uint256 length, bytes32 head);
    error NotKeeper(address caller, address keeper);
    error GatePaused();
    error UnknownMarket(address market, address factory);
    error NoOpenPosition(address market);
    error MarketNotFinal(address market);
    error RenounceDisabled();
    error UnknownReason(uint8 reason);
    /// @notice The market returned more than was asked for; the whole call reverts.
    error FillOutOfBounds(uint256 filled, uint256 quantity, uint256 spent, uint256 cost);

    // ---

    /// @notice Emitted once, at deploy: the bounds and their hash.
    event GateDeployed(
        bytes32 indexed paramsHash,
        Params params,
        address collateral,
        address marketFactory,
        address keeper
    );

    /// @notice One decision. A reader can rebuild the whole feed row from this event alone.
    /// @param verdict 0 ABSTAIN, 1 BUY_UP, 2 BUY_DOWN, VERDICT_INVALID when `raw` did not parse.
    /// @param snapshot `abi.encode(Snapshot)` of what the gate read, or empty when it read
    /// nothing (ABSTAIN and unparseable answers evaluate nothing else, so the book is not read;
    /// an empty field says so, where zeros would look like an empty book).
    /// @param order Price, quantity and worst-case cost, and what actually filled and was spent.
    /// @param raw The model's answer exactly as submitted.
    event Decision(
        address indexed market,
        bytes32 indexed promptHash,
        uint8 indexed reason,
        uint8 verdict,
        uint16 failedMask,
        bytes snapshot,
        Order order,
        string raw
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

    /// @notice The pure decision rule. Never reverts.
    /// @dev Rules, each a bit of `failedMask` (reason = lowest failing code, 0 = PASS):
    /// 1 ABSTAIN (nothing else evaluated); 2 finalized; 3 `expirySec <= nowSec` or fewer than
    /// `minHeadroom` seconds left; 4 the side needed is empty (bestAsk 0 for BUY_UP, bestBid 0 for
    /// BUY_DOWN); 5 price paid outside [minPrice, maxPrice] (when the side is non-empty; a book
    /// value >= 1e6 is outside every band); 6 quantity 0; 7 `0 < quantity < minQuantity`;
    /// 8 `openPositions >= maxConcurrent`; 9 `openNotional + cost > maxNotional`;
    /// 10 `cost > collateralAvailable` (9 and 10 when rule 4 passed and quantity > 0);
    /// 11 a verdict code other than 0, 1, 2 (nothing else evaluated).
    /// BUY_UP pays `bestAsk` rounded up onto the tick grid. BUY_DOWN sets the UP limit to
    /// `bestBid` rounded down onto the grid and pays `1e6 - limit`. quantity = maxSize rounded
    /// down onto the lot grid; cost = ceil(quantity * pricePaid / 1e6), saturating at 2^256-1.
    /// A book value >= 1e6 is outside every band and is not rounded: BUY_UP then pays `bestAsk`
    /// as it stands, BUY_DOWN pays 0 (the difference saturates), and rules 9 and 10 use that.
    /// A tick or lot of 0 means no grid.
    function evaluate(Snapshot calldata s, uint8 verdict)
        external
        view
        returns (uint8 reason, uint16 failedMask, uint256 pricePaid, uint256 quantity, uint256 cost);

    /// @notice Parses `raw`, reads `market` and the gate's own state, evaluates, and on PASS
    /// buys immediate-or-cancel at the gate's limit price. Keeper only; the market must come
    /// from the immutable factory. An unparseable `raw` is a published reason-11 row.
    function submitVerdict(address market, string calldata raw, bytes32 promptHash)
        external
        returns (uint8 reason);

    /// @notice Closes the gate's position in a final market, collecting any payout. Anyone may
    /// call it; a losing position closes with payout 0.
    function redeem(address market) external returns (uint256 payout);

    function pause() external;
    function unpause() external;
    function withdrawCollateral(address to, uint256 amount) external;
    function setKeeper(address newKeeper) external;

    // --- views

    function reasonLabel(uint8 reason) external pure returns (string memory);
    function bounds() external view returns (Params memory);
    function paramsHash() external view returns (bytes32);
    function collateral() external view returns (address);
    function marketFactory() external view returns (address);
    function keeper() external view returns (address);
    function paused() external view returns (bool);
    function openPositions() external view returns (uint8);
    function openNotional() external view returns (uint256);
    function positionOf(address market) external view returns (Position memory);
    /// @notice The snapshot `submitVerdict` would evaluate for `market` right now.
    function snapshotOf(address market) external view returns (Snapshot memory);
}
