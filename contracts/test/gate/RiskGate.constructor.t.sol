// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateTestBase} from "./GateTestBase.sol";
import {RiskGate} from "../../src/RiskGate.sol";
import {relayed} from "../utils/Modes.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {MarketFactory} from "../../src/venue/MarketFactory.sol";
import {TestCollateral} from "../../src/venue/TestCollateral.sol";

/// @notice Constructor validation: each bad bound, resolver list or address reverts naming the
/// field and the value; what is accepted is fixed and announced once.
contract RiskGateConstructorTest is GateTestBase {
    function _deploy(IRiskGate.Params memory p) internal returns (RiskGate) {
        return deployGate(p);
    }

    function _deployWith(address[] memory resolvers) internal returns (RiskGate) {
        return new RiskGate(
            defaultParams(),
            resolvers,
            creatorList(),
            address(token),
            address(venue),
            keeperAddr,
            relayed(),
            address(0)
        );
    }

    function _deployWithCreators(address[] memory creators) internal returns (RiskGate) {
        return new RiskGate(
            defaultParams(),
            trustedList(),
            creators,
            address(token),
            address(venue),
            keeperAddr,
            relayed(),
            address(0)
        );
    }

    /// @dev `n` distinct non-zero addresses, ascending: 0x1000, 0x1001, ...
    function _ascending(uint256 n) internal pure returns (address[] memory list) {
        list = new address[](n);
        for (uint256 i; i < n; ++i) {
            // casting to 'uint160' is safe because n <= 9: the value stays below 0x1009.
            // forge-lint: disable-next-line(unsafe-typecast)
            list[i] = address(uint160(0x1000 + i));
        }
    }

    // --- v1 bounds

    function test_constructor_revertsWhenMinPriceZero() public {
        IRiskGate.Params memory p = defaultParams();
        p.minPrice = 0;
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.MinPriceZero.selector));
        _deploy(p);
    }

    function test_constructor_revertsWhenBandInvertedOrEmpty() public {
        IRiskGate.Params memory p = defaultParams();
        p.minPrice = 500_000;
        p.maxPrice = 500_000; // empty
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.PriceBandEmpty.selector, 500_000, 500_000));
        _deploy(p);
        p.maxPrice = 499_999; // inverted
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.PriceBandEmpty.selector, 500_000, 499_999));
        _deploy(p);
    }

    function test_constructor_revertsWhenMaxPriceAtCertainty() public {
        IRiskGate.Params memory p = defaultParams();
        p.maxPrice = 1_000_000;
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.MaxPriceAtCertainty.selector, 1_000_000, 1_000_000)
        );
        _deploy(p);
        p.maxPrice = 999_999; // just below certainty: accepted
        _deploy(p);
    }

    function test_constructor_revertsWhenMaxSizeZero() public {
        IRiskGate.Params memory p = defaultParams();
        p.maxSize = 0;
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.MaxSizeZero.selector));
        _deploy(p);
    }

    function test_constructor_revertsWhenHeadroomBelowFloor() public {
        IRiskGate.Params memory p = defaultParams();
        p.minHeadroom = 119;
        vm.expectRevert(
            abi.encodeWithSelector(
                IRiskGate.MinHeadroomBelowFloor.selector, uint32(119), uint32(120)
            )
        );
        _deploy(p);
        p.minHeadroom = 120; // at the floor: accepted
        assertEq(_deploy(p).bounds().minHeadroom, 120);
    }

    function test_constructor_revertsWhenMaxConcurrentZero() public {
        IRiskGate.Params memory p = defaultParams();
        p.maxConcurrent = 0;
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.MaxConcurrentZero.selector));
        _deploy(p);
    }

    function test_constructor_revertsWhenMaxNotionalZero() public {
        IRiskGate.Params memory p = defaultParams();
        p.maxNotional = 0;
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.MaxNotionalZero.selector));
        _deploy(p);
    }

    // --- v2 bounds

    function test_constructor_revertsWhenMaxHorizonBelowHeadroom() public {
        IRiskGate.Params memory p = defaultParams();
        p.maxHorizon = MIN_HEADROOM - 1; // 299 < 300
        vm.expectRevert(
            abi.encodeWithSelector(
                IRiskGate.MaxHorizonBelowHeadroom.selector, uint32(299), uint32(300)
            )
        );
        _deploy(p);
        p.maxHorizon = MIN_HEADROOM; // equal: the only expiry accepted is exactly 300 s out
        assertEq(_deploy(p).bounds().maxHorizon, 300);
    }

    function test_constructor_revertsWhenMaxDrawdownZero() public {
        IRiskGate.Params memory p = defaultParams();
        p.maxDrawdown = 0;
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.MaxDrawdownZero.selector));
        _deploy(p);
        p.maxDrawdown = 1;
        assertEq(_deploy(p).bounds().maxDrawdown, 1);
    }

    function test_constructor_revertsWhenWriteOffGraceBelowFloor() public {
        IRiskGate.Params memory p = defaultParams();
        p.writeOffGrace = 3_599;
        vm.expectRevert(
            abi.encodeWithSelector(
                IRiskGate.WriteOffGraceBelowFloor.selector, uint32(3_599), uint32(3_600)
            )
        );
        _deploy(p);
        p.writeOffGrace = 0;
        vm.expectRevert(
            abi.encodeWithSelector(
                IRiskGate.WriteOffGraceBelowFloor.selector, uint32(0), uint32(3_600)
            )
        );
        _deploy(p);
        p.writeOffGrace = 3_600; // at the floor: accepted
        assertEq(_deploy(p).bounds().writeOffGrace, 3_600);
    }

    function test_constructor_revertsWhenMinFillBpsOutOfRange() public {
        IRiskGate.Params memory p = defaultParams();
        p.minFillBps = 0;
        vm.expectRevert(
            abi.encodeWithSelector(
                IRiskGate.MinFillBpsOutOfRange.selector, uint16(0), uint16(10_000)
            )
        );
        _deploy(p);
        p.minFillBps = 10_001;
        vm.expectRevert(
            abi.encodeWithSelector(
                IRiskGate.MinFillBpsOutOfRange.selector, uint16(10_001), uint16(10_000)
            )
        );
        _deploy(p);
        p.minFillBps = type(uint16).max;
        vm.expectRevert(
            abi.encodeWithSelector(
                IRiskGate.MinFillBpsOutOfRange.selector, type(uint16).max, uint16(10_000)
            )
        );
        _deploy(p);
        // Both ends of 1..10_000 are accepted.
        p.minFillBps = 1;
        assertEq(_deploy(p).bounds().minFillBps, 1);
        p.minFillBps = 10_000;
        assertEq(_deploy(p).bounds().minFillBps, 10_000);
    }

    // --- trusted resolvers

    function test_constructor_revertsWhenResolversEmpty() public {
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.TrustedResolversEmpty.selector));
        _deployWith(new address[](0));
    }

    function test_constructor_revertsWhenNineResolvers() public {
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.TooManyTrustedResolvers.selector, 9, 8));
        _deployWith(_ascending(9));
    }

    function test_constructor_acceptsEightResolversAndReadsThemBack() public {
        address[] memory list = _ascending(8);
        RiskGate g = _deployWith(list);
        address[] memory back = g.trustedResolvers();
        assertEq(back.length, 8);
        for (uint256 i; i < 8; ++i) {
            assertEq(back[i], list[i], "read back in order");
            assertTrue(g.isTrustedResolver(list[i]), "each is trusted");
        }
        assertFalse(g.isTrustedResolver(address(0x0fff)), "one below the first");
        assertFalse(g.isTrustedResolver(address(0x1008)), "one above the last");
        assertFalse(g.isTrustedResolver(address(0)), "zero is never trusted");
    }

    function test_constructor_zeroIsNotTrustedWhenSlotsAreUnused() public {
        // One resolver: seven immutables are left at zero, and zero must still be untrusted.
        RiskGate g = _deployWith(one(address(0x1000)));
        assertEq(g.trustedResolvers().length, 1);
        assertTrue(g.isTrustedResolver(address(0x1000)));
        assertFalse(g.isTrustedResolver(address(0)));
    }

    function test_constructor_revertsWhenResolverZero() public {
        address[] memory list = _ascending(2);
        list[0] = address(0); // zero first would even be ascending
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.TrustedResolverZero.selector, 0));
        _deployWith(list);
        list = _ascending(2);
        list[1] = address(0);
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.TrustedResolverZero.selector, 1));
        _deployWith(list);
    }

    function test_constructor_revertsWhenResolversNotAscending() public {
        address[] memory list = _ascending(3);
        (list[1], list[2]) = (list[2], list[1]); // 0x1000, 0x1002, 0x1001
        vm.expectRevert(
            abi.encodeWithSelector(
                IRiskGate.TrustedResolversNotAscending.selector, 2, address(0x1002), address(0x1001)
            )
        );
        _deployWith(list);
    }

    function test_constructor_revertsWhenResolverDuplicated() public {
        address[] memory list = _ascending(3);
        list[2] = list[1]; // 0x1000, 0x1001, 0x1001
        vm.expectRevert(
            abi.encodeWithSelector(
                IRiskGate.TrustedResolversNotAscending.selector, 2, address(0x1001), address(0x1001)
            )
        );
        _deployWith(list);
    }

    // --- addresses and the factory

    function test_constructor_revertsWhenAddressZero() public {
        IRiskGate.Params memory p = defaultParams();
        address[] memory list = trustedList();
        address[] memory creators = creatorList();
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.ZeroAddress.selector, "collateral"));
        new RiskGate(
            p, list, creators, address(0), address(venue), keeperAddr, relayed(), address(0)
        );
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.ZeroAddress.selector, "marketFactory"));
        new RiskGate(
            p, list, creators, address(token), address(0), keeperAddr, relayed(), address(0)
        );
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.ZeroAddress.selector, "keeper"));
        new RiskGate(
            p, list, creators, address(token), address(venue), address(0), relayed(), address(0)
        );
    }

    function test_constructor_revertsWhenFactoryTradesAnotherCollateral() public {
        TestCollateral other = new TestCollateral();
        MarketFactory otherVenue = new MarketFactory(address(other));
        vm.expectRevert(
            abi.encodeWithSelector(
                IRiskGate.FactoryCollateralMismatch.selector, address(other), address(token)
            )
        );
        new RiskGate(
            defaultParams(),
            trustedList(),
            creatorList(),
            address(token),
            address(otherVenue),
            keeperAddr,
            relayed(),
            address(0)
        );
    }

    function test_constructor_revertsWhenFactoryHasNoCode() public {
        // The collateral() call to an account without code fails Solidity's extcodesize check.
        vm.expectRevert(bytes(""));
        new RiskGate(
            defaultParams(),
            trustedList(),
            creatorList(),
            address(token),
            makeAddr("no-code"),
            keeperAddr,
            relayed(),
            address(0)
        );
    }

    // --- what is accepted is fixed and announced

    function test_constructor_fixesBoundsAndEmitsParamsHash() public {
        IRiskGate.Params memory p = defaultParams();
        address[] memory list = trustedList();
        address[] memory creators = creatorList();
        // A relayed gate's mode is the empty setting: no signers, every field 0.
        bytes32 expected = keccak256(abi.encode(p, list, creators, relayed(), address(0)));
        vm.expectEmit();
        emit IRiskGate.GateDeployed(
            expected,
            p,
            list,
            creators,
            address(token),
            address(venue),
            keeperAddr,
            relayed(),
            address(0)
        );
        RiskGate g = _deploy(p);
        assertEq(g.paramsHash(), expected);
        assertEq(
            keccak256(
                abi.encode(
                    g.bounds(), g.trustedResolvers(), g.trustedCreators(), relayed(), address(0)
                )
            ),
            expected,
            "read back"
        );
        assertEq(uint256(g.gateMode()), uint256(IRiskGate.GateMode.Relayed), "mode");
        assertEq(keccak256(abi.encode(g.bounds())), keccak256(abi.encode(p)), "bounds");
        assertEq(g.owner(), address(this));
        assertEq(g.keeper(), keeperAddr);
        assertEq(g.collateral(), address(token));
        assertEq(g.marketFactory(), address(venue));
        assertEq(g.highWaterMark(), 0, "H starts at 0");
        assertEq(g.accountedCollateral(), 0, "the account starts at 0");
        assertEq(g.MAX_TRUSTED_CREATORS(), 8);
        assertEq(uint256(g.WRITE_OFF_GRACE_FLOOR()), 3_600);
        assertEq(g.MAX_TRUSTED_RESOLVERS(), 8);
        assertEq(uint256(g.BPS()), 10_000);
        assertEq(g.RAW_HEAD_BYTES(), 64);
    }

    function test_constructor_paramsHashCoversTheResolvers() public {
        // Same bounds, different trusted list: a different hash.
        RiskGate a = _deployWith(one(address(0x1000)));
        RiskGate b = _deployWith(one(address(0x1001)));
        assertNotEq(a.paramsHash(), b.paramsHash());
        assertEq(
            a.paramsHash(),
            keccak256(
                abi.encode(
                    defaultParams(), one(address(0x1000)), creatorList(), relayed(), address(0)
                )
            )
        );
    }

    // --- trusted creators: the same rules as resolvers, their own errors

    function test_constructor_creatorListRules() public {
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.TrustedCreatorsEmpty.selector));
        _deployWithCreators(new address[](0));
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.TooManyTrustedCreators.selector, 9, 8));
        _deployWithCreators(_ascending(9));
        address[] memory list = _ascending(3);
        list[1] = address(0);
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.TrustedCreatorZero.selector, 1));
        _deployWithCreators(list);
        list = _ascending(3);
        list[2] = address(0x1001);
        vm.expectRevert(
            abi.encodeWithSelector(
                IRiskGate.TrustedCreatorsNotAscending.selector, 2, address(0x1001), address(0x1001)
            )
        );
        _deployWithCreators(list);
        // Eight is the most, and accepted: each is an immutable, read back in order.
        RiskGate g = _deployWithCreators(_ascending(8));
        assertEq(g.trustedCreators().length, 8);
        assertEq(g.trustedCreators()[7], address(0x1007));
        assertTrue(g.isTrustedCreator(address(0x1003)), "listed");
        assertFalse(g.isTrustedCreator(address(0x1008)), "not listed");
        assertFalse(g.isTrustedCreator(address(0)), "zero is never trusted");
    }

    function test_constructor_paramsHashCoversTheCreators() public {
        RiskGate a = _deployWithCreators(one(address(0x1000)));
        RiskGate b = _deployWithCreators(one(address(0x1001)));
        assertNotEq(a.paramsHash(), b.paramsHash());
    }

    // --- one key, one role: a stolen keeper key is never also a resolver or a creator

    function test_constructor_refusesAKeeperThatIsATrustedResolverOrCreator() public {
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.KeeperIsTrustedResolver.selector, otherResolver)
        );
        new RiskGate(
            defaultParams(),
            trustedList(),
            creatorList(),
            address(token),
            address(venue),
            otherResolver,
            relayed(),
            address(0)
        );
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.KeeperIsTrustedCreator.selector, otherCreator)
        );
        new RiskGate(
            defaultParams(),
            trustedList(),
            creatorList(),
            address(token),
            address(venue),
            otherCreator,
            relayed(),
            address(0)
        );
    }

    function test_setKeeper_refusesATrustedResolverOrCreator() public {
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.KeeperIsTrustedResolver.selector, otherResolver)
        );
        gate.setKeeper(otherResolver);
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.KeeperIsTrustedCreator.selector, otherCreator)
        );
        gate.setKeeper(otherCreator);
        address fresh = makeAddr("fresh-keeper");
        gate.setKeeper(fresh);
        assertEq(gate.keeper(), fresh);
    }
}
