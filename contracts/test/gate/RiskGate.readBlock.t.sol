// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateVenueBase} from "./GateVenueBase.sol";
import {Vm} from "../utils/Test.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";

/// @notice `readBlock`, the block the keeper rendered the prompt from: any block up to the
/// current one is accepted and published verbatim in the Decision (ABSTAIN, unparseable and PASS
/// rows alike); one above the current block reverts `ReadBlockInFuture`, after the keeper and
/// pause checks. How old it may be is not this check's business: the quote's deadline bounds
/// staleness.
///
/// On the fixture's 0.40 / 0.42 book BUY_UP is quoted ceil(420_000 * 1.005) = 422_100 and buys
/// 1_000 UP at 0.42: limit 420_000, cost and spend 1_000 * 420_000 / 1e6 = 420.
contract RiskGateReadBlockTest is GateVenueBase {
    uint256 internal constant HEIGHT = 100;

    function setUp() public override {
        super.setUp();
        vm.roll(HEIGHT);
    }

    function _buyUpOrder() internal pure returns (IRiskGate.Order memory) {
        return IRiskGate.Order(420_000, 420_000, 1_000, 420, 1_000, 420);
    }

    // --- accepted: at or below the current block

    function test_submitVerdict_acceptsReadBlockEqualToCurrentBlock() public {
        assertEq(block.number, HEIGHT);
        IRiskGate.Quote memory q = keeperQuote(market, "BUY_UP");
        assertEq(q.maxPricePaid, 422_100, "keeper quote");
        IRiskGate.Snapshot memory s = expectedSnapshot(market);
        // A PASS row carries the readBlock as given: 100.
        expectDecisionRead(market, "BUY_UP", 100, 0, BUY_UP, 0, abi.encode(s, q), _buyUpOrder());
        assertEq(submitRead(market, "BUY_UP", 100, q), 0);
        assertEq(gate.openNotional(), 420, "the buy went through");
    }

    function test_submitVerdict_acceptsAndPublishesAnOldReadBlock() public {
        // Block 1 while the chain is at 100: 99 blocks old, yet accepted; the quote's deadline
        // (now + 60 s, the clock did not move) is what bounds staleness.
        IRiskGate.Quote memory q = keeperQuote(market, "BUY_UP");
        IRiskGate.Snapshot memory s = expectedSnapshot(market);
        expectDecisionRead(market, "BUY_UP", 1, 0, BUY_UP, 0, abi.encode(s, q), _buyUpOrder());
        assertEq(submitRead(market, "BUY_UP", 1, q), 0);
        assertEq(market.upBalanceOf(address(gate)), 1_000);
    }

    function test_submitVerdict_publishesReadBlockForAbstain() public {
        IRiskGate.Order memory nothing;
        expectDecisionRead(market, "ABSTAIN", 98, 1, ABSTAIN, bit(1), "", nothing);
        assertEq(submitRead(market, "ABSTAIN", 98, IRiskGate.Quote(0, 0)), 1);
    }

    function test_submitVerdict_publishesReadBlockForUnparseableAnswer() public {
        string memory raw = "I would say BUY_UP, probably";
        IRiskGate.Order memory nothing;
        // Reason 11, verdict VERDICT_INVALID (255), nothing evaluated: still readBlock 97.
        expectDecisionRead(market, raw, 97, 11, 255, bit(11), "", nothing);
        assertEq(submitRead(market, raw, 97, IRiskGate.Quote(0, 0)), 11);
    }

    function test_submitVerdict_readBlockIsTheFirstDataWordOfDecision() public {
        // What an off-chain reader decodes: topics are (signature, market, promptHash, reason);
        // the data starts with readBlock, right after the indexed promptHash in the signature.
        assertEq(
            IRiskGate.Decision.selector,
            keccak256(
                "Decision(address,bytes32,uint64,uint8,uint8,uint32,bytes,"
                "(uint256,uint256,uint256,uint256,uint256,uint256),bytes,uint256,bytes32,bytes)"
            ),
            "event signature"
        );
        vm.recordLogs();
        assertEq(submitRead(market, "ABSTAIN", 42, IRiskGate.Quote(0, 0)), 1);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        uint256 found;
        for (uint256 i; i < logs.length; ++i) {
            if (logs[i].emitter != address(gate)) continue;
            if (logs[i].topics[0] != IRiskGate.Decision.selector) continue;
            found += 1;
            assertEq(logs[i].topics.length, 4, "three indexed fields");
            assertEq(logs[i].topics[2], keccak256("ABSTAIN"), "promptHash");
            assertEq(uint256(logs[i].topics[3]), 1, "reason");
            (uint64 readBlock, uint8 verdict) = abi.decode(logs[i].data, (uint64, uint8));
            assertEq(uint256(readBlock), 42, "readBlock, first data word");
            assertEq(uint256(verdict), ABSTAIN, "verdict, second data word");
        }
        assertEq(found, 1, "one Decision");
    }

    // --- refused: above the current block

    function test_submitVerdict_revertsWhenReadBlockOneAhead() public {
        IRiskGate.Quote memory q = keeperQuote(market, "BUY_UP");
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.ReadBlockInFuture.selector, 101, 100));
        submitRead(market, "BUY_UP", 101, q);
        // Not a decision row: ABSTAIN and an unparseable answer revert the same way.
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.ReadBlockInFuture.selector, 101, 100));
        submitRead(market, "ABSTAIN", 101, IRiskGate.Quote(0, 0));
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.ReadBlockInFuture.selector, 101, 100));
        submitRead(market, "no idea", 101, IRiskGate.Quote(0, 0));
        assertEq(gate.openNotional(), 0, "nothing bought");
    }

    function test_submitVerdict_revertsWhenReadBlockIsMaxUint64() public {
        uint64 max = type(uint64).max; // 18_446_744_073_709_551_615
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.ReadBlockInFuture.selector, max, 100));
        submitRead(market, "ABSTAIN", max, IRiskGate.Quote(0, 0));
    }

    function test_submitVerdict_keeperAndPauseAreCheckedBeforeReadBlock() public {
        // A stranger naming a future block is told it is not the keeper.
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.NotKeeper.selector, address(this), keeperAddr)
        );
        gate.submitVerdict(address(market), "BUY_UP", bytes32(0), 101, looseQuote());
        // The keeper of a paused gate naming a future block is told the gate is paused.
        gate.pause();
        vm.prank(keeperAddr);
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.GatePaused.selector));
        gate.submitVerdict(address(market), "BUY_UP", bytes32(0), 101, looseQuote());
    }

    /// Any readBlock at any height: accepted and published iff readBlock <= block.number. Half
    /// the runs sit on the boundary, readBlock in {height - 1, height, height + 1}.
    function testFuzz_submitVerdict_readBlockAcceptedIffNotAboveCurrentBlock(
        uint64 readBlock,
        uint256 heightSeed,
        bool nearBoundary
    ) public {
        uint256 height = bound(heightSeed, 1, type(uint64).max - 1);
        vm.roll(height);
        if (nearBoundary) {
            // casting to 'uint64' is safe because height + 1 <= type(uint64).max.
            // forge-lint: disable-next-line(unsafe-typecast)
            readBlock = uint64(bound(readBlock, height - 1, height + 1));
        }
        if (readBlock > height) {
            vm.expectRevert(
                abi.encodeWithSelector(IRiskGate.ReadBlockInFuture.selector, readBlock, height)
            );
            submitRead(market, "ABSTAIN", readBlock, IRiskGate.Quote(0, 0));
        } else {
            IRiskGate.Order memory nothing;
            expectDecisionRead(market, "ABSTAIN", readBlock, 1, ABSTAIN, bit(1), "", nothing);
            assertEq(submitRead(market, "ABSTAIN", readBlock, IRiskGate.Quote(0, 0)), 1);
        }
    }
}
