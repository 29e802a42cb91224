// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateTestBase} from "./GateTestBase.sol";
import {RiskGate} from "../../src/RiskGate.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {BinaryMarket} from "../../src/venue/BinaryMarket.sol";
import {MarketFactory} from "../../src/venue/MarketFactory.sol";
import {TestCollateral} from "../../src/venue/TestCollateral.sol";

/// @notice A real gate over a real venue: collateral token, factory, markets with resting maker
/// liquidity. The test contract is the owner of the gate and the resolver of every market.
abstract contract GateVenueBase is GateTestBase {
    uint256 internal constant GATE_FUNDS = 100_000;
    uint64 internal constant START = 1_000_000;
    uint64 internal constant EXPIRY = START + 1 days;

    TestCollateral internal token;
    MarketFactory internal venue;
    BinaryMarket internal market;
    address internal maker = makeAddr("maker");

    function setUp() public virtual override {
        vm.warp(START);
        token = new TestCollateral();
        venue = new MarketFactory(address(token));
        gate = new RiskGate(defaultParams(), address(token), address(venue), keeperAddr);
        token.mint(address(gate), GATE_FUNDS);
        market = newMarket();
        // Book 0.40 x 2_000 / 0.42 x 2_000 on a 0.01 tick, lot 100, minimum 100.
        makerQuote(market, true, 400_000, 2_000);
        makerQuote(market, false, 420_000, 2_000);
    }

    function newMarket() internal returns (BinaryMarket) {
        return BinaryMarket(venue.createMarket(10_000, 100, 100, EXPIRY, address(this)));
    }

    function makerQuote(BinaryMarket m, bool isBid, uint256 price, uint256 quantity) internal {
        token.mint(maker, 10_000_000);
        vm.startPrank(maker);
        token.approve(address(m), type(uint256).max);
        if (isBid) m.placeBid(price, quantity);
        else m.placeAsk(price, quantity);
        vm.stopPrank();
    }

    function submit(BinaryMarket m, string memory raw) internal returns (uint8) {
        vm.prank(keeperAddr);
        return gate.submitVerdict(address(m), raw, keccak256(bytes(raw)));
    }

    /// @dev What the gate should read from `m` given its own state, per the specification.
    function expectedSnapshot(BinaryMarket m) internal view returns (IRiskGate.Snapshot memory) {
        return IRiskGate.Snapshot({
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
            collateralAvailable: token.balanceOf(address(gate))
        });
    }

    function assertConserved(BinaryMarket m) internal view {
        assertEq(
            token.balanceOf(address(m)), m.escrowTotal() + m.outstanding(), "market conservation"
        );
    }
}
