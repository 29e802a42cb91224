// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateTestBase} from "./GateTestBase.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {BinaryMarket} from "../../src/venue/BinaryMarket.sol";

/// @notice A real gate over a real venue: collateral token, factory, markets with resting maker
/// liquidity. The test contract is the owner of the gate and the (trusted) resolver of every
/// market made with `newMarket`. Submissions go through `submit`, which quotes the way the keeper
/// does: 50 bps over the price of the chosen side in the book as read, valid for 60 s.
abstract contract GateVenueBase is GateTestBase {
    uint256 internal constant GATE_FUNDS = 100_000;
    uint64 internal constant START = 1_000_000;
    uint64 internal constant EXPIRY = START + 1 days;
    uint256 internal constant SLIPPAGE_BPS = 50;
    uint64 internal constant VERDICT_TTL = 60;

    BinaryMarket internal market;
    address internal maker = makeAddr("maker");

    function setUp() public virtual override {
        vm.warp(START);
        super.setUp();
        token.mint(address(gate), GATE_FUNDS);
        market = newMarket();
        // Book 0.40 x 2_000 / 0.42 x 2_000 on a 0.01 tick, lot 100, minimum 100 (20 minimums
        // each where a suite raises the minimum).
        makerQuote(market, true, 400_000, 20 * marketMinimum());
        makerQuote(market, false, 420_000, 20 * marketMinimum());
    }

    function newMarket() internal returns (BinaryMarket) {
        return newMarket(EXPIRY, address(this));
    }

    function newMarket(uint64 expiry, address resolver) internal returns (BinaryMarket) {
        return
            BinaryMarket(
                venue.createMarket(QUESTION, 10_000, 100, marketMinimum(), expiry, resolver)
            );
    }

    /// @dev The venue minimum of the fixture's markets. With the fixture's bounds (1_000 units,
    /// 30 %), 100 lets 64 matches fill 6_400 >= 300 (rule 20 passes); suites with larger orders
    /// raise it.
    function marketMinimum() internal pure virtual returns (uint256) {
        return 100;
    }

    function makerQuote(BinaryMarket m, bool isBid, uint256 price, uint256 quantity)
        internal
        returns (uint256 orderId)
    {
        return quoteAs(maker, m, isBid, price, quantity);
    }

    function quoteAs(address who, BinaryMarket m, bool isBid, uint256 price, uint256 quantity)
        internal
        returns (uint256 orderId)
    {
        token.mint(who, 10_000_000);
        vm.startPrank(who);
        token.approve(address(m), type(uint256).max);
        orderId = isBid ? m.placeBid(price, quantity) : m.placeAsk(price, quantity);
        vm.stopPrank();
    }

    /// @dev The keeper's quote for `raw` against the book of `m` as it stands: for a buy,
    /// ceil(seen * (10_000 + 50) / 10_000) where seen is the best ask (BUY_UP) or 1e6 minus the
    /// best bid (BUY_DOWN), and deadline now + 60; Quote(0, 0) for anything else.
    function keeperQuote(BinaryMarket m, string memory raw)
        internal
        view
        returns (IRiskGate.Quote memory q)
    {
        uint8 verdict;
        try gate.parseVerdict(raw) returns (uint8 v) {
            verdict = v;
        } catch {
            return q;
        }
        if (verdict == ABSTAIN) return q;
        uint256 seen;
        if (verdict == BUY_UP) {
            seen = m.bestAsk();
        } else if (m.bestBid() != 0) {
            seen = ONE - m.bestBid();
        }
        q.maxPricePaid = (seen * (10_000 + SLIPPAGE_BPS) + 9_999) / 10_000;
        q.deadline = uint64(block.timestamp) + VERDICT_TTL;
    }

    function submit(BinaryMarket m, string memory raw) internal returns (uint8) {
        return submitQuoted(m, raw, keeperQuote(m, raw));
    }

    function submitQuoted(BinaryMarket m, string memory raw, IRiskGate.Quote memory q)
        internal
        returns (uint8)
    {
        return submitRead(m, raw, readBlockNow(), q);
    }

    /// @dev As the keeper, naming `readBlock` as the block the prompt was rendered from.
    function submitRead(
        BinaryMarket m,
        string memory raw,
        uint64 readBlock,
        IRiskGate.Quote memory q
    ) internal returns (uint8) {
        vm.prank(keeperAddr);
        return gate.submitVerdict(address(m), raw, keccak256(bytes(raw)), readBlock, q);
    }

    /// @dev What the gate should read from `m` given its own state, per the specification,
    /// with the account settled as submitVerdict does before evaluating a buy: collateral above
    /// the gate's account raises H by exactly that much, then H = max(H, balance + openNotional).
    function expectedSnapshot(BinaryMarket m) internal view returns (IRiskGate.Snapshot memory s) {
        IRiskGate.Position memory p = gate.positionOf(address(m));
        uint256 balance = token.balanceOf(address(gate));
        uint256 equity = balance + gate.openNotional();
        uint256 accounted = gate.accountedCollateral();
        uint256 stored = gate.highWaterMark() + (balance > accounted ? balance - accounted : 0);
        s = IRiskGate.Snapshot({
            bestBid: m.bestBid(),
            bestAsk: m.bestAsk(),
            tickSize: m.tickSize(),
            lotSize: m.lotSize(),
            minQuantity: m.minQuantity(),
            expirySec: m.expiry(),
            nowSec: uint64(block.timestamp),
            finalized: m.finalized(),
            openPositions: gate.openPositions(),
            openNotional: gate.openNotional(),
            collateralAvailable: balance,
            resolverTrusted: m.resolver() == address(this) || m.resolver() == otherResolver,
            heldSide: p.upUnits != 0 ? 1 : p.downUnits != 0 ? 2 : 0,
            highWaterMark: equity > stored ? equity : stored,
            creatorTrusted: venue.creatorOf(address(m)) == address(this)
                || venue.creatorOf(address(m)) == otherCreator
        });
    }

    /// @dev The first 64 bytes of `raw` (all of it when shorter): what the Decision logs.
    function rawHead(bytes memory raw) internal pure returns (bytes memory head) {
        uint256 n = raw.length < 64 ? raw.length : 64;
        head = new bytes(n);
        for (uint256 i; i < n; ++i) {
            head[i] = raw[i];
        }
    }

    /// @dev Expects the next Decision from the gate, field for field, read at the current block
    /// (what `submit` and `submitQuoted` name).
    function expectDecision(
        BinaryMarket m,
        string memory raw,
        uint8 reason,
        uint8 verdict,
        uint32 mask,
        bytes memory evaluated,
        IRiskGate.Order memory order
    ) internal {
        expectDecisionRead(m, raw, readBlockNow(), reason, verdict, mask, evaluated, order);
    }

    /// @dev Expects the next Decision from the gate, field for field, publishing `readBlock`.
    function expectDecisionRead(
        BinaryMarket m,
        string memory raw,
        uint64 readBlock,
        uint8 reason,
        uint8 verdict,
        uint32 mask,
        bytes memory evaluated,
        IRiskGate.Order memory order
    ) internal {
        // Read `raw` up front: the event's twelve fields leave the deep parameters out of reach.
        bytes32 hash = keccak256(bytes(raw));
        bytes memory head = rawHead(bytes(raw));
        uint256 length = bytes(raw).length;
        vm.expectEmit(address(gate));
        emit IRiskGate.Decision(
            address(m),
            hash,
            readBlock,
            reason,
            verdict,
            mask,
            evaluated,
            order,
            head,
            length,
            hash,
            ""
        );
    }

    function assertConserved(BinaryMarket m) internal view {
        assertEq(
            token.balanceOf(address(m)), m.escrowTotal() + m.outstanding(), "market conservation"
        );
    }
}
