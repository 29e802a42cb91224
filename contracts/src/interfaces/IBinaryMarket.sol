// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title IBinaryMarket
/// @notice A binary market with one shared order book quoted in UP price (1e6 = certainty).
/// A bid is an order to buy UP at price p; an ask is an order to buy DOWN at UP price p, whose
/// owner pays `1e6 - p` per unit. A fill mints one UP and one DOWN unit against exactly one
/// unit of collateral, so every outstanding unit pair is fully backed.
/// @dev Grids are immutable and chosen so that `tickSize * lotSize` is a multiple of 1e6:
/// every on-grid fill then costs an exact integer amount on both legs, with no rounding.
interface IBinaryMarket {
    /// @notice One price level of the book: the UP price and the total resting quantity.
    struct Level {
        uint256 price;
        uint256 quantity;
    }

    /// @notice Everything RiskGate needs from the market, read in one call.
    struct GateQuote {
        uint256 bestBid;
        uint256 bestAsk;
        uint256 tickSize;
        uint256 lotSize;
        uint256 minQuantity;
        uint64 expiry;
        bool finalized;
    }

    // ---

    error PriceOffGrid(uint256 price, uint256 tickSize);
    error PriceOutOfRange(uint256 price);
    error QuantityOffGrid(uint256 quantity, uint256 lotSize);
    error QuantityBelowMinimum(uint256 quantity, uint256 minQuantity);
    error TradingClosed(uint256 nowSec, uint256 expiry);
    error OrderWouldCross(uint256 price, uint256 bestOpposite);
    error NotOrderOwner(uint256 orderId, address caller, address owner);
    error OrderNotActive(uint256 orderId);
    error NotResolver(address caller, address resolver);
    error NotYetExpired(uint256 nowSec, uint256 expiry);
    error AlreadyFinalized();
    error NotFinalized();

    // ---

    event OrderPlaced(
        uint256 indexed orderId, address indexed owner, bool isBid, uint256 price, uint256 quantity
    );
    event OrderCancelled(uint256 indexed orderId, address indexed owner, uint256 refund);
    /// @notice One maker order matched against a taker. `upBuyer` receives `quantity` UP units
    /// and paid `quantity * price / 1e6`; `downBuyer` receives as many DOWN units and paid the rest.
    event Fill(
        uint256 indexed orderId,
        address indexed upBuyer,
        address indexed downBuyer,
        uint256 price,
        uint256 quantity
    );
    event Resolved(bool upWins, uint256 atSec);
    event Redeemed(address indexed holder, uint256 units, uint256 payout);

    // ---

    /// @notice Rests a bid (buy UP at `price`), escrowing `quantity * price / 1e6` collateral.
    function placeBid(uint256 price, uint256 quantity) external returns (uint256 orderId);

    /// @notice Rests an ask (buy DOWN at UP price `price`), escrowing
    /// `quantity * (1e6 - price) / 1e6` collateral.
    function placeAsk(uint256 price, uint256 quantity) external returns (uint256 orderId);

    /// @notice Cancels a resting order and refunds the escrow of its unfilled part. The order
    /// leaves its level at once (O(1)), so cancelled orders never cost a later taker gas.
    function cancel(uint256 orderId) external returns (uint256 refund);

    /// @notice Immediate-or-cancel: buy up to `quantity` UP from asks priced at or below
    /// `limitPrice`, matching at most `MAX_MATCHES_PER_TAKE` resting orders (best price first,
    /// FIFO within a price). Whatever is still unfilled then is dropped, not rested. Pulls
    /// exactly what was spent. A maker order this leaves with less than `minQuantity` is
    /// cancelled and its maker refunded (`OrderCancelled`), so no resting order is ever below
    /// the minimum.
    function buyUp(uint256 limitPrice, uint256 quantity)
        external
        returns (uint256 filled, uint256 spent);

    /// @notice Immediate-or-cancel: buy up to `quantity` DOWN from bids priced at or above the UP
    /// price `upLimitPrice` (paying `1e6 - bid` per unit), matching at most
    /// `MAX_MATCHES_PER_TAKE` resting orders; the unfilled rest is dropped. Pulls exactly what
    /// was spent. A maker left below `minQuantity` is cancelled and refunded, as for `buyUp`.
    function buyDown(uint256 upLimitPrice, uint256 quantity)
        external
        returns (uint256 filled, uint256 spent);

    /// @notice Finalizes the market; only the immutable resolver, only after expiry.
    function resolve(bool upWon) external;

    /// @notice Pays one collateral unit per winning unit held by the caller; returns 0 (no
    /// revert) when the caller holds none, so a losing position can always be closed.
    function redeem() external returns (uint256 payout);

    /// @notice Price levels of one side, best first, at most `depth` of them.
    function getBookLevels(bool bids, uint256 depth) external view returns (Level[] memory);

    function gateQuote() external view returns (GateQuote memory);

    /// @notice The most resting orders one `buyUp` or `buyDown` matches (64). It bounds a
    /// taker's gas whatever the book holds: many tiny orders at the limit cost a taker at most
    /// this many fills, and the caller sees the shortfall as `filled < quantity`.
    function MAX_MATCHES_PER_TAKE() external view returns (uint256);

    function bestBid() external view returns (uint256);
    function bestAsk() external view returns (uint256);
    function collateral() external view returns (address);
    function tickSize() external view returns (uint256);
    function lotSize() external view returns (uint256);
    function minQuantity() external view returns (uint256);
    function expiry() external view returns (uint64);
    function resolver() external view returns (address);
    /// @notice keccak256 of the market's question, whose text `MarketCreated` published.
    function questionHash() external view returns (bytes32);
    function finalized() external view returns (bool);
    function upWins() external view returns (bool);
    function upBalanceOf(address holder) external view returns (uint256);
    function downBalanceOf(address holder) external view returns (uint256);
    /// @notice Collateral held for resting orders.
    function escrowTotal() external view returns (uint256);
    /// @notice Units that can still claim collateral: minted pairs before resolution, unredeemed
    /// winning units after. Invariant: collateral balance == escrowTotal + outstanding.
    function outstanding() external view returns (uint256);
}
