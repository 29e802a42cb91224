// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Test} from "../utils/Test.sol";
import {TEST_QUESTION} from "../utils/Question.sol";
import {RiskGate} from "../../src/RiskGate.sol";
import {relayed} from "../utils/Modes.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {MarketFactory} from "../../src/venue/MarketFactory.sol";
import {TestCollateral} from "../../src/venue/TestCollateral.sol";

/// @notice Shared fixture for the pure parts of RiskGate: one gate with round, hand-checkable
/// bounds over a real MarketFactory (the constructor asks it for its collateral), and a baseline
/// snapshot that passes in both directions.
abstract contract GateTestBase is Test {
    uint8 internal constant ABSTAIN = 0;
    uint8 internal constant BUY_UP = 1;
    uint8 internal constant BUY_DOWN = 2;
    uint256 internal constant ONE = 1_000_000;
    /// @dev The question of the fixture's markets.
    string internal constant QUESTION = TEST_QUESTION;

    // Bounds: band [0.05, 0.95], 1_000 units per order, 5 minutes of headroom, 3 positions,
    // 10_000 units of collateral at risk; expiry at most 7 days out, 20_000 units of drawdown
    // from the high-water mark, write-off one day after expiry, fills below 30 % undone.
    uint256 internal constant MIN_PRICE = 50_000;
    uint256 internal constant MAX_PRICE = 950_000;
    uint256 internal constant MAX_SIZE = 1_000;
    uint32 internal constant MIN_HEADROOM = 300;
    uint8 internal constant MAX_CONCURRENT = 3;
    uint256 internal constant MAX_NOTIONAL = 10_000;
    uint32 internal constant MAX_HORIZON = 7 days;
    uint256 internal constant MAX_DRAWDOWN = 20_000;
    uint32 internal constant WRITE_OFF_GRACE = 1 days;
    // 30 %: on a 1_000 order with lot 100 the minimum, 300, is exactly three lots.
    uint16 internal constant MIN_FILL_BPS = 3_000;

    TestCollateral internal token;
    MarketFactory internal venue;
    address internal keeperAddr = makeAddr("keeper");
    /// @dev A second trusted resolver, so the gate's list has more than one entry. The test
    /// contract itself is the other one (it resolves the venue tests' markets).
    address internal otherResolver = makeAddr("other-resolver");
    /// @dev Likewise a second trusted creator; the test contract creates the venue tests' markets.
    address internal otherCreator = makeAddr("other-creator");
    RiskGate internal gate;

    function setUp() public virtual {
        token = new TestCollateral();
        venue = new MarketFactory(address(token));
        gate = deployGate(defaultParams());
    }

    function defaultParams() internal pure returns (IRiskGate.Params memory) {
        return IRiskGate.Params({
            minPrice: MIN_PRICE,
            maxPrice: MAX_PRICE,
            maxSize: MAX_SIZE,
            minHeadroom: MIN_HEADROOM,
            maxConcurrent: MAX_CONCURRENT,
            maxNotional: MAX_NOTIONAL,
            maxHorizon: MAX_HORIZON,
            maxDrawdown: MAX_DRAWDOWN,
            writeOffGrace: WRITE_OFF_GRACE,
            minFillBps: MIN_FILL_BPS
        });
    }

    /// @dev The fixture's trusted resolvers, strictly ascending as the constructor requires.
    function trustedList() internal view returns (address[] memory) {
        return sorted2(address(this), otherResolver);
    }

    /// @dev The fixture's trusted creators, strictly ascending.
    function creatorList() internal view returns (address[] memory) {
        return sorted2(address(this), otherCreator);
    }

    function deployGate(IRiskGate.Params memory p) internal returns (RiskGate) {
        return deployGate(p, relayed());
    }

    /// @dev The fixture's gate with bounds `p` in mode `a` (relayed or attested).
    function deployGate(IRiskGate.Params memory p, IRiskGate.Attestors memory a)
        internal
        returns (RiskGate)
    {
        return new RiskGate(
            p,
            trustedList(),
            creatorList(),
            address(token),
            address(venue),
            keeperAddr,
            a,
            address(0)
        );
    }

    function sorted2(address a, address b) internal pure returns (address[] memory list) {
        list = new address[](2);
        (list[0], list[1]) = a < b ? (a, b) : (b, a);
    }

    function one(address a) internal pure returns (address[] memory list) {
        list = new address[](1);
        list[0] = a;
    }

    /// @dev Book 0.40 / 0.42 on a 0.01 tick, lot 100, minimum 100, 9_000 s to expiry, a trusted
    /// resolver and creator, no position in this market, H equal to the equity (1_000_000 + 0).
    /// With `looseQuote` the limit is maxPrice in both directions: BUY_UP limit
    /// roundDown(950_000, 10_000) = 950_000; BUY_DOWN 1e6 - roundUp(50_000, 10_000) = 950_000;
    /// cost ceil(1_000 * 950_000 / 1e6) = 950 either way. BUY_UP pays 420_000; BUY_DOWN pays
    /// 1e6 - 400_000 = 600_000.
    function baseSnapshot() internal pure returns (IRiskGate.Snapshot memory) {
        return IRiskGate.Snapshot({
            bestBid: 400_000,
            bestAsk: 420_000,
            tickSize: 10_000,
            lotSize: 100,
            minQuantity: 100,
            expirySec: 10_000,
            nowSec: 1_000,
            finalized: false,
            openPositions: 0,
            openNotional: 0,
            collateralAvailable: 1_000_000,
            resolverTrusted: true,
            heldSide: 0,
            highWaterMark: 1_000_000,
            creatorTrusted: true
        });
    }

    /// @dev A quote that tightens nothing: any price, never stale. The limit is then maxPrice.
    function looseQuote() internal pure returns (IRiskGate.Quote memory) {
        return IRiskGate.Quote({maxPricePaid: type(uint256).max, deadline: type(uint64).max});
    }

    /// @dev A quote that bounds the price only.
    function priceQuote(uint256 maxPricePaid) internal pure returns (IRiskGate.Quote memory) {
        return IRiskGate.Quote({maxPricePaid: maxPricePaid, deadline: type(uint64).max});
    }

    /// @dev The `readBlock` an honest keeper names when it reads the book in the block it submits
    /// in: the current block.
    function readBlockNow() internal view returns (uint64) {
        // casting to 'uint64' is safe because a block number does not reach 2^64.
        // forge-lint: disable-next-line(unsafe-typecast)
        return uint64(block.number);
    }

    function bit(uint8 rule) internal pure returns (uint32) {
        return uint32(1) << rule;
    }

    function assertOutcome(
        IRiskGate.Snapshot memory s,
        IRiskGate.Quote memory q,
        uint8 verdict,
        uint8 wantReason,
        uint32 wantMask,
        uint256 wantPrice,
        uint256 wantQuantity,
        uint256 wantCost
    ) internal view {
        (uint8 reason, uint32 mask, uint256 price, uint256 quantity, uint256 cost) =
            gate.evaluate(s, q, verdict);
        assertEq(uint256(reason), uint256(wantReason), "reason");
        assertEq(uint256(mask), uint256(wantMask), "failedMask");
        assertEq(price, wantPrice, "pricePaid");
        assertEq(quantity, wantQuantity, "quantity");
        assertEq(cost, wantCost, "cost");
    }

    /// @dev PASS under the loose quote.
    function assertPass(
        IRiskGate.Snapshot memory s,
        uint8 verdict,
        uint256 wantPrice,
        uint256 wantQuantity,
        uint256 wantCost
    ) internal view {
        assertOutcome(s, looseQuote(), verdict, 0, 0, wantPrice, wantQuantity, wantCost);
    }

    function assertRejected(
        IRiskGate.Snapshot memory s,
        IRiskGate.Quote memory q,
        uint8 verdict,
        uint8 reason,
        uint32 mask
    ) internal view {
        assertOutcome(s, q, verdict, reason, mask, 0, 0, 0);
    }

    /// @dev A refusal under the loose quote.
    function assertRejected(IRiskGate.Snapshot memory s, uint8 verdict, uint8 reason, uint32 mask)
        internal
        view
    {
        assertRejected(s, looseQuote(), verdict, reason, mask);
    }

    /// @dev The first 32 bytes of `raw`, zero-padded: what UnknownVerdict reports.
    function headOf(bytes memory raw) internal pure returns (bytes32 h) {
        bytes memory padded = bytes.concat(raw, new bytes(32));
        assembly {
            h := mload(add(padded, 32))
        }
    }

    function unknownVerdict(bytes memory raw) internal pure returns (bytes memory) {
        return abi.encodeWithSelector(IRiskGate.UnknownVerdict.selector, raw.length, headOf(raw));
    }

    function repeatByte(bytes1 c, uint256 n) internal pure returns (bytes memory out) {
        out = new bytes(n);
        for (uint256 i; i < n; ++i) {
            out[i] = c;
        }
    }
}
